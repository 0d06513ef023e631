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
# The libaio jobs run fslab's libaio engine (io_submit/io_getevents, as
# fio's); bench/libaio-vs-fio.sh compares that engine alone at QD1.
source "$(dirname "$0")/lib.sh"
need fio python3
build_fslab
make_work
ROUNDS=${ROUNDS:-5}

export FSLAB ROUNDS RUNTIME work ONLY="${ONLY:-}" AS_WRITTEN="${AS_WRITTEN:-}"
python3 - "$root/tests/fio-jobs/agree" <<'PY'
import glob, json, os, random, re, shutil, statistics, subprocess, sys
jd, work, FSLAB = sys.argv[1], os.environ["work"], os.environ["FSLAB"]
only = os.environ["ONLY"].split()
rounds = int(os.environ["ROUNDS"])

def directives(text):
    d = {}
    for l in text.splitlines():
        m = re.match(r"; ([\w-]+): ?(.*)", l)
        if m:
            d.setdefault(m.group(1), []).append(m.group(2).strip())
    return d

def run(tool, name, d, dev):
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
    cmd = [FSLAB, "fio", "--quiet"] + " ".join(d.get("fslab-args", [])).split() if tool == "fslab" else ["fio", "--clocksource=cpu"]
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
                res[tool].append(run(tool, name, d, dev))
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev])
    if any(x is None for x in res["fslab"]):
        print(f"{name:34} refused or failed under fslab")
        continue
    if any(x is None for x in res["fio"]):
        print(f"{name:34} failed under fio")
        continue
    io_bound = re.search(r"^\s*direct\s*=\s*1", text, re.M) is not None
    for job in res["fio"][0]:
        a = [x[job] for x in res["fio"]]
        b = [x.get(job, 0) for x in res["fslab"]]
        ratio = statistics.median(y / x for x, y in zip(a, b) if x > 0)
        band = 0.10 if io_bound else 0.30
        ok = "ok" if abs(ratio - 1) <= band else "OUT"
        print(f"{name:34} {job:22} {'io' if io_bound else 'cpu':5} {statistics.median(a):10.0f} "
              f"{statistics.median(b):10.0f} {ratio:6.2f}  ±{band:.0%} {ok}")
PY
