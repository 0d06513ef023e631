#!/usr/bin/env bash
# The job files of tests/fio-jobs/agree (public projects' styles), as
# written, run by fio and by `fslab fio` in alternating rounds (the first
# tool swapped every round); prints each job's median IOPS under both and
# the median of the per-round ratios fslab/fio.
#
#   bench/fio-agree.sh                       (root and losetup for the device jobs)
#   ROUNDS=7 ONLY="05 13" bench/fio-agree.sh  (some job files only)
#   FSLAB=target/debug/fslab FSLAB_PREBUILT=1 bench/fio-agree.sh
#
# Targets (issue 33, done-when 1): within ±10% of fio on I/O-bound jobs
# (O_DIRECT), ±30% on CPU-bound ones (buffered I/O on page-cached files).
# The job files' sizes are the test's (small): a run of a few milliseconds
# measures start-up, not the tools. So each job runs time-based for RUNTIME
# seconds (default 5, as the other benches: `time_based` and `runtime=` at the top of a copy, and
# the files' own runtime= lines dropped), the same in both tools;
# AS_WRITTEN=1 runs the files as they are. tests/fio_agree.rs checks what
# does not depend on timing (names, groups, counts, block sizes, files).
#
# fio runs with --clocksource=cpu, and on CPU-bound jobs not paced by the
# clock also with --gtod_reduce=1 (marked cpu*): the peer as fast as it
# honestly can be, while fslab still records every operation's latency.
#
# The libaio jobs run fslab's libaio engine (io_submit/io_getevents, as
# fio's); bench/libaio-vs-fio.sh compares that engine alone at QD1.
#
# RESULTS (2026-12-06, shared 2-core VM, release build, fio 3.33 built by
# bench/build-fio.sh, `ROUNDS=5 RUNTIME=3 FIO=... bench/fio-agree.sh`):
# every CPU-bound job in its ±30% band (0.86-1.15; 02 0.86, 22 1.04/1.07),
# 16 refused in one line as meant; of the I/O-bound ones, three were out in
# this run and inside at ROUNDS=7 right after (05 writer1 1.24 -> 1.07, 06
# sequential_write 1.28 -> 1.01, 13 randread-qd1 0.87 -> 1.00), and 21 (1.16,
# with another bench beside it) 1.00 alone: the virtio disk swings by tens
# of percent between rounds (05 writer1: 172k-298k IOPS under either tool),
# so give the device-bound jobs ROUNDS=7. With Debian's fio instead, 02 was
# 1.35-1.40 (its -O2 build's buffer fill, see bench/build-fio.sh) and 22's
# backwards-read 1.35 without gtod_reduce=1.
source "$(dirname "$0")/lib.sh"
need "$FIO" python3
build_fslab
make_work
ROUNDS=${ROUNDS:-5}

export FIO FSLAB ROUNDS RUNTIME work ONLY="${ONLY:-}" AS_WRITTEN="${AS_WRITTEN:-}"
python3 - "$root/tests/fio-jobs/agree" <<'PY'
import glob, json, os, random, re, shutil, statistics, subprocess, sys
jd, work, FSLAB, FIO = sys.argv[1], os.environ["work"], os.environ["FSLAB"], os.environ["FIO"]
only = os.environ["ONLY"].split()
rounds = int(os.environ["ROUNDS"])

def directives(text):
    d = {}
    for l in text.splitlines():
        m = re.match(r"; ([\w-]+): ?(.*)", l)
        if m:
            d.setdefault(m.group(1), []).append(m.group(2).strip())
    return d

# On a CPU-bound job whose work does not depend on the clock, fio also runs
# with gtod_reduce=1: it then keeps no latencies (fslab still records every
# operation's), so what is left is the I/O and fio's least bookkeeping. Measured
# on 22-offset-modifiers' 4 KiB cached reads (~2.4M/s): fio's clat accounting
# and clock reads cost it ~90 ns a read, 0.71x fslab's rate without the
# option, 0.90x with it. Jobs paced or judged by time (rate, latency_target,
# thinktime, ramp_time, steady state) keep fio's clock; I/O-bound jobs too.
TIMED = re.compile(r"^\s*(rate\w*|latency_\w+|thinktime\w*|ramp_time|steadystate\w*|ss\w*)\s*=", re.M)

def io_bound(text):
    return re.search(r"^\s*direct\s*=\s*1", text, re.M) is not None

def fast_fio(text):
    return not io_bound(text) and not TIMED.search(text)

def run(tool, name, d, dev, text):
    run_dir = os.path.join(work, "run")
    shutil.rmtree(run_dir, ignore_errors=True)
    w, j = os.path.join(run_dir, "w"), os.path.join(run_dir, "j")
    os.makedirs(w)
    shutil.copytree(jd, j)
    if not os.environ["AS_WRITTEN"]:
        path = os.path.join(j, name)
        body = "".join(l for l in open(path).readlines() if not re.match(r"\s*(runtime|timeout)\s*=", l))
        with open(path, "w") as f:
            f.write(f"[global]\ntime_based\nruntime={os.environ['RUNTIME']}\n" + body)
    for p in d.get("prepare", []):
        n, mib = p.split()
        with open(os.path.join(w, n), "wb") as f:
            f.write(random.Random(n).randbytes(int(mib) << 20))
    args = " ".join(d.get("args", [])).split()
    terse = "--minimal" in args
    # fio reads the TSC with --clocksource=cpu, as fslab does, instead of
    # clock_gettime: the peer as fast as it honestly can be (bench/libaio-vs-fio.sh)
    cmd = [FSLAB, "fio", "--quiet"] + " ".join(d.get("fslab-args", [])).split() if tool == "fslab" else [FIO, "--clocksource=cpu"]
    if tool == "fio" and fast_fio(text):
        cmd.append("--gtod_reduce=1")
    cmd += [name] + ([] if terse else ["--output-format=json"]) + args
    env = dict(os.environ, FSLAB_FIO_DIR=w)
    # the previous run's dirty pages are written back now, not during this
    # run (they made a 2 s buffered-write job 0.66x one round, 2.04x another)
    os.sync()
    if dev:
        env["FSLAB_FIO_DEV"] = dev
    p = subprocess.run(cmd, cwd=j, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return None
    if terse:
        return {l.split(";")[2]: float(l.split(";")[7]) + float(l.split(";")[48])
                for l in p.stdout.splitlines() if l.startswith("3;")}
    out = json.loads(p.stdout[p.stdout.index("{"):])
    return {x["jobname"]: x["read"]["iops"] + x["write"]["iops"] for x in out["jobs"]}

print(f"{'job file':34} {'job':22} {'bound':5} {'fio IOPS':>10} {'fslab IOPS':>10} {'ratio':>6}  target")
for f in sorted(glob.glob(jd + "/*.fio")):
    name = os.path.basename(f)
    if only and not any(o in name for o in only):
        continue
    text = open(f).read()
    d = directives(text)
    dev = None
    if "device" in d:
        if os.geteuid() != 0:
            print(f"{name:34} skipped: needs root for a loop device")
            continue
        img = os.path.join(work, "img")
        open(img, "wb").truncate(int(d["device"][0]) << 20)
        dev = subprocess.check_output(["losetup", "--find", "--show", img], text=True).strip()
    try:
        res = {"fio": [], "fslab": []}
        for r in range(rounds):
            for tool in (("fio", "fslab") if r % 2 == 0 else ("fslab", "fio")):
                res[tool].append(run(tool, name, d, dev, text))
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev])
    if any(x is None for x in res["fslab"]):
        print(f"{name:34} refused or failed under fslab")
        continue
    if any(x is None for x in res["fio"]):
        print(f"{name:34} failed under fio")
        continue
    bound = io_bound(text)
    for job in res["fio"][0]:
        a = [x[job] for x in res["fio"]]
        b = [x.get(job, 0) for x in res["fslab"]]
        ratio = statistics.median(y / x for x, y in zip(a, b) if x > 0)
        band = 0.10 if bound else 0.30
        ok = "ok" if abs(ratio - 1) <= band else "OUT"
        kind = "io" if bound else "cpu*" if fast_fio(text) else "cpu"
        print(f"{name:34} {job:22} {kind:5} {statistics.median(a):10.0f} "
              f"{statistics.median(b):10.0f} {ratio:6.2f}  ±{band:.0%} {ok}")
print("cpu*: fio ran with --gtod_reduce=1 (no latencies kept; fslab kept its own)")
PY
