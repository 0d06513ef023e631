#!/usr/bin/env bash
# What the telemetry beside every cell costs: 4 KiB random reads of a
# page-cached 1 GiB file (1 job, sync engine), with telemetry (the default)
# and with --no-telemetry, alternating round by round and swapping which goes
# first; prints the median of the per-round IOPS ratios. With PROFILE=1
# (default) a --profile run joins each round and its cost is printed too.
#
#   bench/telemetry-cost.sh
#   COST_ROUNDS=9 RUNTIME=10 PROFILE=0 bench/telemetry-cost.sh
#
# Target (issue 21, done-when 6): telemetry costs at most 1 % (ratio >= 0.99).
source "$(dirname "$0")/lib.sh"
need python3
COST_ROUNDS=${COST_ROUNDS:-7}
PROFILE=${PROFILE:-1}
build_fslab
make_work

f="$work/cached.dat"
head -c 1G /dev/urandom > "$f"
cat "$f" > /dev/null  # in the page cache before anyone measures

on=(); off=(); prof=(); prof_cost=()
run() {  # run NAME [fslab flags]: the IOPS into NAME's array
    local name=$1; shift
    "$FSLAB" io --target "$f" --rw randread --bs 4k --runtime "${RUNTIME}s" --quiet "$@" \
        --output "json:$work/$name.json"
    local iops
    iops=$(json "$work/$name.json" "d['cells'][0]['directions'][0]['iops']")
    case $name in
        on) on+=("$iops") ;;
        off) off+=("$iops") ;;
        prof)
            prof+=("$iops")
            prof_cost+=("$(json "$work/prof.json" "(d['cells'][0].get('profile') or {}).get('overhead_pct', 'nan')")")
            ;;
    esac
}

echo "== 4 KiB randread, page-cached 1 GiB file, 1 job, ${RUNTIME}s x $COST_ROUNDS rounds, alternating"
for i in $(seq "$COST_ROUNDS"); do
    if ((i % 2)); then run on; run off; else run off; run on; fi
    line="  round $i: telemetry ${on[-1]%.*}  --no-telemetry ${off[-1]%.*}  ratio $(ratio "${on[-1]}" "${off[-1]}")"
    if [ "$PROFILE" = 1 ]; then
        run prof --profile --profile-dir "$work"
        line+="  --profile ${prof[-1]%.*} (profiler's own CPU ${prof_cost[-1]} % of fslab's)"
    fi
    echo "$line"
done
echo "  median IOPS: telemetry $(median "${on[@]}"), --no-telemetry $(median "${off[@]}")"
echo "  RATIO telemetry/none = $(median_ratio "${on[*]}" "${off[*]}") (median of per-round ratios; target >= 0.99)"
if [ "$PROFILE" = 1 ]; then
    # the --profile run goes last in every round: compared with the
    # --no-telemetry run of the same round
    echo "  RATIO profile/none = $(median_ratio "${prof[*]}" "${off[*]}") (profiling's cost; no target)"
    echo "  profiler's own CPU, median: $(median "${prof_cost[@]}") % of fslab's"
fi
