#!/usr/bin/env bash
# What `--profile` costs (issue 21): the create rate of a metadata cell on an
# XFS loop filesystem with a 256-byte xattr per file, without and with
# --profile, alternating (the order swapped every round); prints each
# round, the median of the per-round ratios (of the rate, and of the files
# per CPU-second, which a machine busy with other work disturbs less), and
# the profiler's own figure (profile.overhead_pct: its reader thread's CPU,
# % of fslab's).
#
#   bench/profile-cost.sh                      (needs root, mkfs.xfs, losetup)
#   PROFILE_ROUNDS=9 FILES=40k JOBS=2 bench/profile-cost.sh
source "$(dirname "$0")/lib.sh"
need mkfs.xfs losetup python3
[ "$(id -u)" = 0 ] || { echo "bench: needs root (mounts)" >&2; exit 2; }
PROFILE_ROUNDS=${PROFILE_ROUNDS:-7}
FILES=${FILES:-20k}
JOBS=${JOBS:-1}
build_fslab
make_work
mnt="$work/mnt"; mkdir -p "$mnt"; mnts+=("$mnt")
attach_loop 2G
mkfs.xfs -q -f "$dev"
mount "$dev" "$mnt"

run() { # run NAME [flags]
    local name=$1; shift
    "$FSLAB" meta --target "$mnt" --files "$FILES" --jobs "$JOBS" --xattr user.test:256 --order seq \
        --quiet --output "json:$work/$name.json" "$@"
}
rate() { json "$work/$1.json" 'd["cells"][0]["directions"][0]["iops"]'; }
per_cpu() { json "$work/$1.json" 'd["cells"][0]["directions"][0]["iops"] * 100 / d["cells"][0]["directions"][0]["cpu_percent"]'; }

plain=(); prof=(); plain_cpu=(); prof_cpu=(); cost=()
for r in $(seq 1 "$PROFILE_ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
        run plain$r; run prof$r --profile --profile-dir "$work"
    else
        run prof$r --profile --profile-dir "$work"; run plain$r
    fi
    a=$(rate plain$r); b=$(rate prof$r)
    plain+=("$a"); prof+=("$b"); plain_cpu+=("$(per_cpu plain$r)"); prof_cpu+=("$(per_cpu prof$r)")
    cost+=("$(json "$work/prof$r.json" 'd["cells"][0]["profile"]["overhead_pct"]')")
    printf 'round %d: without %8.0f files/s, with --profile %8.0f files/s (%s; per CPU-s %s), reader %s%%\n' \
        "$r" "$a" "$b" "$(ratio "$b" "$a")" "$(ratio "${prof_cpu[-1]}" "${plain_cpu[-1]}")" "${cost[-1]}"
done
echo "median create rate: without $(median "${plain[@]}"), with $(median "${prof[@]}") files/s"
echo "median ratio with/without: rate $(median_ratio "${prof[*]}" "${plain[*]}"), files per CPU-s $(median_ratio "${prof_cpu[*]}" "${plain_cpu[*]}")"
echo "median profiler cost printed by fslab: $(median "${cost[@]}")% of fslab's CPU"
