#!/usr/bin/env bash
# What the telemetry beside every cell costs: 4 KiB random reads of a
# page-cached 1 GiB file (1 job, sync engine), with telemetry (the default)
# and with --no-telemetry, alternating round by round and swapping which goes
# first; prints the median of the per-round IOPS ratios, and the same for
# operations per CPU-second of fslab's process (the sampler's thread
# included), and the CPU time of the sampler's own thread (fslab-telemetry,
# read from /proc while the run goes) against fslab's: on a shared machine
# other tenants move IOPS by +-15 % from second to second, while the CPU the
# sampler takes does not depend on them. With PROFILE=1
# (default) a --profile run joins each round and its cost is printed too.
#
#   bench/telemetry-cost.sh
#   COST_ROUNDS=9 RUNTIME=10 PROFILE=0 SIZE=256M bench/telemetry-cost.sh
#
# Target (issue 21, done-when 6): telemetry costs at most 1 % (ratio >= 0.99).
source "$(dirname "$0")/lib.sh"
need python3
COST_ROUNDS=${COST_ROUNDS:-7}
PROFILE=${PROFILE:-1}
build_fslab
make_work

# median_ratio3 "A1 A2 ..." "B1 B2 ...": the median of Ai/Bi, three decimals (the target is 1 %)
median_ratio3() {
    python3 -c "import statistics,sys; a=sys.argv[1].split(); b=sys.argv[2].split(); print(f'{statistics.median(float(x)/float(y) for x,y in zip(a,b)):.3f}')" "$1" "$2"
}

# The file lives in tmpfs (/dev/shm) where there is one: its pages are page
# cache that nobody's drop_caches can push out (fslab run drops the cache
# before each cell, and a shared machine has other users of it).
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    shm=$(mktemp -d /dev/shm/fslab-bench.XXXXXX)
    trap 'rm -rf "$shm"; cleanup_work' EXIT INT TERM
    f="$shm/cached.dat"
else
    f="$work/cached.dat"
fi
head -c "${SIZE:-1G}" /dev/urandom > "$f"
cat "$f" > /dev/null  # in the page cache before anyone measures

on=(); off=(); prof=(); prof_cost=(); on_eff=(); off_eff=(); sampler_pct=()
run() {  # run NAME [fslab flags]: the IOPS into NAME's array
    local name=$1; shift
    cat "$f" > /dev/null  # back in the page cache if other tenants pushed it out
    # fslab, with the CPU seconds of its fslab-telemetry thread on stdout
    python3 - "$FSLAB" "$work/$name.json" io --target "$f" --rw randread --bs 4k --runtime "${RUNTIME}s" \
        --quiet "$@" > "$work/$name.sampler" <<'PY'
import os, subprocess, sys, time
fslab, out, *args = sys.argv[1:]
p = subprocess.Popen([fslab, *args, "--output", f"json:{out}"])
cpu_s = 0.0
while p.poll() is None:
    try:
        for t in os.listdir(f"/proc/{p.pid}/task"):
            with open(f"/proc/{p.pid}/task/{t}/comm") as c:
                if c.read().strip() == "fslab-telemetry":
                    # schedstat: ns on the CPU (stat's ticks are 10 ms: too coarse)
                    cpu_s = int(open(f"/proc/{p.pid}/task/{t}/schedstat").read().split()[0]) / 1e9
    except OSError:
        pass  # the thread or the process ended meanwhile
    time.sleep(0.1)
if p.returncode != 0:
    sys.exit(f"fslab failed: exit {p.returncode}")
print(cpu_s)
PY
    local iops
    iops=$(json "$work/$name.json" "d['cells'][0]['directions'][0]['iops']")
    # operations per CPU-second of the whole process
    eff=$(json "$work/$name.json" "d['cells'][0]['directions'][0]['ops'] / ((d['cells'][0]['cpu']['user_ns'] + d['cells'][0]['cpu']['sys_ns']) / 1e9)")
    case $name in
        on)
            on+=("$iops"); on_eff+=("$eff")
            sampler_pct+=("$(json "$work/on.json" "100 * $(cat "$work/on.sampler") / ((d['cells'][0]['cpu']['user_ns'] + d['cells'][0]['cpu']['sys_ns']) / 1e9)")")
            ;;
        off) off+=("$iops"); off_eff+=("$eff") ;;
        prof)
            prof+=("$iops")
            prof_cost+=("$(json "$work/prof.json" "(d['cells'][0].get('profile') or {}).get('overhead_pct', 'nan')")")
            ;;
    esac
}

echo "== 4 KiB randread, page-cached ${SIZE:-1G} file ($(stat -f -c %T "$f")), 1 job, ${RUNTIME}s x $COST_ROUNDS rounds, alternating"
for i in $(seq "$COST_ROUNDS"); do
    if ((i % 2)); then run on; run off; else run off; run on; fi
    line="  round $i: telemetry ${on[-1]%.*}  --no-telemetry ${off[-1]%.*}  ratio $(ratio "${on[-1]}" "${off[-1]}")"
    line+=" (per CPU-s $(ratio "${on_eff[-1]}" "${off_eff[-1]}"); sampler thread $(printf %.3f "${sampler_pct[-1]}") % of fslab's CPU)"
    if [ "$PROFILE" = 1 ]; then
        run prof --profile --profile-dir "$work"
        line+="  --profile ${prof[-1]%.*} (profiler's own CPU ${prof_cost[-1]} % of fslab's)"
    fi
    echo "$line"
done
echo "  median IOPS: telemetry $(median "${on[@]}"), --no-telemetry $(median "${off[@]}")"
echo "  RATIO telemetry/none = $(median_ratio3 "${on[*]}" "${off[*]}") (IOPS, median of per-round ratios; target >= 0.99)"
echo "  RATIO telemetry/none per CPU-second = $(median_ratio3 "${on_eff[*]}" "${off_eff[*]}") (operations per CPU-second of fslab, median of per-round ratios)"
echo "  sampler thread's CPU, median: $(printf %.3f "$(median "${sampler_pct[@]}")") % of fslab's (/proc/PID/task/TID/schedstat of fslab-telemetry; target <= 1 %)"
if [ "$PROFILE" = 1 ]; then
    # the --profile run goes last in every round: compared with the
    # --no-telemetry run of the same round
    echo "  RATIO profile/none = $(median_ratio3 "${prof[*]}" "${off[*]}") (profiling's cost; no target)"
    echo "  profiler's own CPU, median: $(median "${prof_cost[@]}") % of fslab's"
fi
