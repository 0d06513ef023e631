#!/usr/bin/env bash
# The same fio job files run by fio and by `fslab fio`, alternating, in one
# run; prints median IOPS and the ratio per job.
#
#   bench/fio-jobs-vs-fio.sh              (needs root and losetup for the device jobs)
#   ROUNDS=5 RUNTIME=10 bench/fio-jobs-vs-fio.sh
#   ONLY="hetero-qd rate-beside" bench/fio-jobs-vs-fio.sh   (some job files only)
#
# Targets (issue 10): the I/O-bound jobs (4 KiB random reads at QD32 with
# io_uring and 16 KiB randrw 9:1 from 16 jobs, both O_DIRECT on a loop
# device) within +-5% of fio; the CPU-bound one (1 MiB sequential reads of a
# page-cached file) >= 1.0x fio.
#
# Issue 22 adds job files whose jobs differ and run side by side, compared
# job by job (each job's IOPS, fslab/fio): two O_DIRECT random readers at
# iodepth 1 and 16 (I/O-bound), a rate-limited job beside an unlimited one
# (the limited one must hold its rate in both tools; the unlimited one is
# I/O-bound), and two page-cached readers with different block sizes
# (CPU-bound: two jobs on a machine's cores share them as the scheduler
# decides, so the target is on the jobs' summed bandwidth; each job's ratio is
# printed beside it). Every job file runs with `thread`, as fslab does.
source "$(dirname "$0")/lib.sh"
need fio python3 losetup
build_fslab
make_work
preconditioned_loop
mkdir -p "$work/dir"

# One file both tools read (written with 1 MiB writes, then cached): with
# directory= each laid out its own, and the page cache's folios differ with
# who wrote the file (fio read its own at 8.7k IOPS and a dd-written one at
# 9.2k), which is not the tools' overhead.
dd if=/dev/urandom of="$work/dir/seq.0" bs=1M count=1024 status=none
cat "$work/dir/seq.0" >/dev/null
cat > "$work/seqread.fio" <<JOB
[seqread]
filename=$work/dir/seq.0
rw=read
bs=1m
size=1g
invalidate=0
time_based
runtime=$RUNTIME
JOB
cat > "$work/randread-qd32.fio" <<JOB
[randread-qd32]
filename=$dev
ioengine=io_uring
iodepth=32
direct=1
rw=randread
bs=4k
size=1g
time_based
runtime=$RUNTIME
JOB
# thread: fio runs the 16 jobs as threads, as fslab does; forked, they cost
# fio ~5 % of its IOPS on 2 cores (see io-vs-fio.sh). fslab accepts the option.
cat > "$work/randrw-16jobs.fio" <<JOB
[randrw-16jobs]
thread
filename=$dev
ioengine=psync
direct=1
rw=randrw
rwmixread=90
bs=16k
size=1g
numjobs=16
group_reporting
time_based
runtime=$RUNTIME
JOB

# jobs that differ, side by side (issue 22)
cat > "$work/hetero-qd.fio" <<JOB
[global]
thread
filename=$dev
ioengine=io_uring
direct=1
rw=randread
bs=4k
size=1g
time_based
runtime=$RUNTIME
[qd1]
iodepth=1
[qd16]
iodepth=16
JOB
cat > "$work/rate-beside.fio" <<JOB
[global]
thread
filename=$dev
ioengine=psync
direct=1
rw=randread
bs=4k
size=1g
time_based
runtime=$RUNTIME
[limited]
rate_iops=500
[unlimited]
JOB
head -c 256M /dev/urandom > "$work/dir/cached.0"
cat > "$work/hetero-cached.fio" <<JOB
[global]
thread
filename=$work/dir/cached.0
size=256m
invalidate=0
time_based
runtime=$RUNTIME
[seq1m]
ioengine=psync
rw=read
bs=1m
[rand4k]
ioengine=psync
rw=randread
bs=4k
JOB

# ONLY="a b": run these job files only
wanted() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
iops() { json "$1" "sum(j['read']['iops'] + j['write']['iops'] for j in d['jobs'])"; }
# every job's bandwidth, bytes/s
bw() { json "$1" "sum(j['read']['bw_bytes'] + j['write']['bw_bytes'] for j in d['jobs'])"; }
# one job's IOPS by its name
job_iops() { json "$1" "sum(j['read']['iops'] + j['write']['iops'] for j in d['jobs'] if j['jobname'] == '$2')"; }

for job in hetero-qd:qd1,qd16 rate-beside:limited,unlimited hetero-cached:seq1m,rand4k; do
    names=${job#*:}; job=${job%%:*}
    wanted "$job" || continue
    case $job in
        hetero-cached) rounds=$ROUNDS;;
        *) rounds=$IO_ROUNDS;;
    esac
    echo "== $job (jobs side by side: $names): ${RUNTIME}s x $rounds rounds"
    declare -A f=() s=(); fb=""; sb=""
    for i in $(seq "$rounds"); do
        one() {
            if [ "$1" = fio ]; then
                fio "$work/$job.fio" --output-format=json --output="$work/fio.json" >/dev/null
            else
                "$FSLAB" fio "$work/$job.fio" --allow-device --force-overwrite --quiet \
                    --output-format=json --output="$work/fio.json" 2>/dev/null
            fi
            line="  round $i $1:"
            if [ "$1" = fio ]; then fb+="$(bw "$work/fio.json") "; else sb+="$(bw "$work/fio.json") "; fi
            for n in ${names//,/ }; do
                v=$(job_iops "$work/fio.json" "$n")
                if [ "$1" = fio ]; then f[$n]+="$v "; else s[$n]+="$v "; fi
                line+=" $n ${v%.*}"
            done
            echo "$line"
        }
        if ((i % 2)); then one fio; one fslab; else one fslab; one fio; fi
    done
    for n in ${names//,/ }; do
        case $job:$n in
            rate-beside:limited) target="both at 500 IOPS: fslab $(median ${s[$n]}) fio $(median ${f[$n]})";;
            hetero-cached:*) target="see the summed bandwidth";;
            *) target="0.95..1.05 (I/O-bound)";;
        esac
        echo "  RATIO fslab/fio $job/$n = $(median_ratio "${s[$n]}" "${f[$n]}") (median of per-round ratios; target $target)"
    done
    [ "$job" = hetero-cached ] &&
        echo "  RATIO fslab/fio $job bandwidth of all jobs = $(median_ratio "$sb" "$fb") (target >= 1.0, CPU-bound)"
    unset f s
done

for job in seqread randread-qd32 randrw-16jobs; do
    wanted "$job" || continue
    case $job in
        seqread) target=">= 1.0 (CPU-bound)" rounds=$ROUNDS;;
        *) target="0.95..1.05 (I/O-bound)" rounds=$IO_ROUNDS;;
    esac
    echo "== $job: ${RUNTIME}s x $rounds rounds"
    f=(); s=()
    run_fio() {
        fio "$work/$job.fio" --output-format=json --output="$work/fio.json" >/dev/null
        f+=("$(iops "$work/fio.json")")
    }
    run_fslab() {
        "$FSLAB" fio "$work/$job.fio" --allow-device --force-overwrite --quiet \
            --output-format=json --output="$work/fslab.json" 2>/dev/null
        s+=("$(iops "$work/fslab.json")")
    }
    for i in $(seq "$rounds"); do
        if ((i % 2)); then run_fio; run_fslab; else run_fslab; run_fio; fi
        echo "  round $i: fio ${f[-1]%.*}  fslab ${s[-1]%.*}"
    done
    fm=$(median "${f[@]}"); sm=$(median "${s[@]}")
    echo "  median IOPS: fio $fm, fslab $sm (ratio of medians $(ratio "$sm" "$fm"))"
    echo "  RATIO fslab/fio $job = $(median_ratio "${s[*]}" "${f[*]}") (median of per-round ratios; target $target)"
done
