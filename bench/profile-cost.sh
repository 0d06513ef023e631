#!/usr/bin/env bash
# What `--profile` costs (issue 21): the create rate of a metadata cell on an
# XFS loop filesystem with a 256-byte xattr per file, without and with
# --profile, alternating (the order swapped every round); prints each
# round, the median of the per-round ratios, and the profiler's own figure
# (profile.overhead_pct: its reader thread's CPU, % of fslab's).
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

run() { # run NAME [flags]: seq-create files/s
    local name=$1; shift
    "$FSLAB" meta --target "$mnt" --files "$FILES" --jobs "$JOBS" --xattr user.test:256 --order seq \
        --quiet --output "json:$work/$name.json" "$@"
    json "$work/$name.json" 'd["cells"][0]["directions"][0]["iops"]'
}

plain=(); prof=(); cost=()
for r in $(seq 1 "$PROFILE_ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
        a=$(run plain$r); b=$(run prof$r --profile --profile-dir "$work")
    else
        b=$(run prof$r --profile --profile-dir "$work"); a=$(run plain$r)
    fi
    c=$(json "$work/prof$r.json" 'd["cells"][0]["profile"]["overhead_pct"]')
    plain+=("$a"); prof+=("$b"); cost+=("$c")
    printf 'round %d: without %8.0f files/s, with --profile %8.0f files/s (%s), reader %s%%\n' \
        "$r" "$a" "$b" "$(ratio "$b" "$a")" "$c"
done
echo "median create rate: without $(median "${plain[@]}"), with $(median "${prof[@]}") files/s"
echo "median ratio with/without: $(median_ratio "${prof[*]}" "${plain[*]}")"
echo "median profiler cost printed by fslab: $(median "${cost[@]}")% of fslab's CPU"
