#!/usr/bin/env bash
# fio's own examples (`git archive` of fio's examples/) run by fio 3.33 and
# by `fslab fio`, each in a scratch directory; prints each example's class:
#   agrees   both ran; the same job names and groups, and for untimed jobs
#            the same operations within 2% (10% with random block sizes; a
#            read/write mix's directions within their binomial spread)
#   refused  fslab refused it in one line naming the option (exit 2)
#   WRONG    fslab ran it and disagrees with fio, or failed otherwise
#   (fio)    fio itself cannot run it here (an engine, device, network or
#            library this machine lacks): not counted
#
#   bench/fio-examples.sh [EXAMPLE...]     (FIO_SRC: fio's git dir, or EXAMPLES: a directory)
#   FSLAB=target/debug/fslab FSLAB_PREBUILT=1 bench/fio-examples.sh
#
# fio gets up to eight tries (fio 3.33's offload mode deadlocks in
# workqueue_init about one run in three here, fixed after 3.33 by fio's
# 736c2015 "workqueue: fix threads stall when running with io_submit_mode
# offload"; its net sender sometimes dies of SIGPIPE); exec.fio runs
# /usr/sbin/turbostat, from linux-cpupower (without it fslab refuses the
# example, as it should, and fio runs a copy of itself).
#
# Safety: no example runs against a device, nor fills a real filesystem.
# Each runs in a 1 GiB tmpfs of its own (O_DIRECT works on tmpfs since
# Linux 6.6; fill_device fills the tmpfs). Every filename= under /dev/ (and
# every other absolute filename=) is rewritten to a file there, prepared
# with 16 MiB of random bytes (so a size-less job has something to read, as
# on the device), every directory= to it; an example that still names
# /dev/ after that is skipped. Needs root (the mounts).
# Sizes above 16 MiB are cut to 16m, runtimes and startdelays to 1 s, ramps
# to 0.2 s, loops to 2 and nrfiles to 256 (which changes no job's shape); a
# rate-limited example without a runtime gets runtime=2s (fio's
# 1mbs_clients reads 32 MiB at 1.25 MB/s): both tools stop it by time, and
# only its names and groups are compared. A tool still running after 60 s
# is stopped and the example counted as that tool's failure. fslab gets
# --force-overwrite for the prepared files (the consent the example's
# device path stood for).
#
# The last run (fio 3.33 on the examples of its own tag: EXAMPLES= a `git archive fio-3.33
# examples`, fslab at b7dbe33, 2026-12-06, a quiet machine). Both io_submit_mode=offload
# examples count only when fio 3.33 finishes them in one of its tries; in a run beside the test
# suite it deadlocked in all five tries of each, and 38 agreed:
# RESULTS-BEGIN
#   1mbs_clients.fio                     agrees   timed: names and groups; notes: 1
#   aio-read.fio                         agrees   names, groups, ops; notes: 5
#   backwards-read.fio                   agrees   names, groups, ops; notes: 2
#   basic-verify.fio                     agrees   names, groups, ops; notes: 1
#   butterfly.fio                        agrees   names, groups, ops; notes: 2
#   cmdprio-bssplit.fio                  refused  cmdprio-bssplit.fio:18: [cmdprio] bssplit: a write split whose smallest block (1048576) is not the read one's (65536) is not supported
#   cmdprio-percentage.fio               agrees   names, groups, ops; notes: 1
#   cpp_null.fio                         (fio)    fio: engine cpp_null not loadable
#   cpuio.fio                            agrees   timed: names and groups
#   cross-stripe-verify.fio              (fio)    write-verify: you need to specify valid offset=
#   dedupe-global.fio                    agrees   names, groups, ops; notes: 1
#   dev-dax.fio                          (fio)    exit 32
#   dfs.fio                              (fio)    fio: engine dfs not loadable
#   disk-zone-profile.fio                agrees   names, groups, ops; notes: 1
#   e4defrag.fio                         (fio)    verify: bad header rand_seed 6439386208354195776, wanted 5403213822391342790 at file /var/tmp/fslab-bench.sfwL
#   e4defrag2.fio                        (fio)    fio: time_based requires a runtime/timeout setting
#   enospc-pressure.fio                  (fio)    exit 1
#   exec.fio                             agrees   timed: names and groups
#   exitwhat.fio                         agrees   timed: names and groups; notes: 2
#   falloc.fio                           agrees   timed: names and groups; notes: 7
#   filecreate-ioengine.fio              agrees   names, groups, ops; notes: 4
#   filedelete-ioengine.fio              agrees   names, groups, ops; notes: 2
#   filestat-ioengine.fio                agrees   names, groups, ops; notes: 2
#   fio-rand-RW.fio                      agrees   timed: names and groups; notes: 2
#   fio-rand-read.fio                    agrees   timed: names and groups; notes: 2
#   fio-rand-write.fio                   agrees   timed: names and groups; notes: 2
#   fio-seq-RW.fio                       agrees   timed: names and groups; notes: 2
#   fio-seq-read.fio                     agrees   timed: names and groups; notes: 3
#   fio-seq-write.fio                    agrees   timed: names and groups; notes: 2
#   fixed-rate-submission.fio            agrees   timed: names and groups; notes: 3
#   flow.fio                             agrees   timed: names and groups; notes: 2
#   fsx.fio                              agrees   names, groups, ops; notes: 2
#   ftruncate.fio                        agrees   timed: names and groups; notes: 5
#   gfapi.fio                            (fio)    glfs_init failed. Is glusterd running on brick?
#   gpudirect-rdmaio-client.fio          (fio)    fio: failed parsing mem=cudamalloc
#   gpudirect-rdmaio-server.fio          (fio)    fio: failed parsing mem=cudamalloc
#   http-s3-crypto.fio                   (fio)    fio: engine http not loadable
#   http-s3-storage-class.fio            (fio)    fio: engine http not loadable
#   http-s3.fio                          (fio)    fio: engine http not loadable
#   http-swift.fio                       (fio)    fio: engine http not loadable
#   http-webdav.fio                      (fio)    fio: engine http not loadable
#   ime.fio                              (fio)    fio: engine ime_psync not loadable
#   iometer-file-access-server.fio       agrees   names, groups, ops; notes: 2
#   jesd219.fio                          agrees   names, groups, ops; notes: 1
#   latency-profile.fio                  agrees   names, groups, ops; notes: 2
#   libcufile-cufile.fio                 (fio)    fio: engine libcufile not loadable
#   libcufile-posix.fio                  (fio)    fio: engine libcufile not loadable
#   libhdfs.fio                          (fio)    fio: engine libhdfs not loadable
#   libiscsi.fio                         (fio)    fio: engine libiscsi not loadable
#   libpmem.fio                          (fio)    exit 2
#   librpma_apm-client.fio               (fio)    fio: engine librpma_apm_client not loadable
#   librpma_apm-server.fio               (fio)    fio: engine librpma_apm_server not loadable
#   librpma_gpspm-client.fio             (fio)    fio: engine librpma_gpspm_client not loadable
#   librpma_gpspm-server.fio             (fio)    fio: engine librpma_gpspm_server not loadable
#   libzbc-rand-write.fio                (fio)    fio: engine libzbc not loadable
#   libzbc-seq-read.fio                  (fio)    fio: engine libzbc not loadable
#   mtd.fio                              (fio)    libmtd: error!: "/var/tmp/fslab-bench.sfwLu8/ex/mtd.fio/d/dev_dev_mtd0" is not a character device
#   nbd.fio                              (fio)    fio: nbd_connect_uri: nbd_connect_uri: connect: Connection refused
#   netio.fio                            agrees   names, groups, ops
#   netio_multicast.fio                  agrees   names, groups, ops
#   nfs.fio                              (fio)    fio: engine nfs not loadable
#   null.fio                             agrees   names, groups, ops; notes: 1
#   numa.fio                             (fio)    libnuma: Warning: node argument 1 out of range
#   pmemblk.fio                          (fio)    pmemblk: unable to open pmemblk pool file /var/tmp/fslab-bench.sfwLu8/ex/pmemblk.fio/d/dev_pmem0_fio_test_4096
#   poisson-rate-submission.fio          agrees   timed: names and groups; notes: 3
#   rados.fio                            (fio)    rados_conf_read_file failed.
#   rand-zones.fio                       agrees   names, groups, ops; notes: 2
#   rbd.fio                              (fio)    rados_conf_read_file failed.
#   rdmaio-client.fio                    (fio)    fio: failed parsing port
#   rdmaio-server.fio                    (fio)    fio: failed parsing port
#   sg_verify-fail.fio                   (fio)    ioengine sg only works on block or character devices
#   sg_verify.fio                        (fio)    ioengine sg only works on block or character devices
#   sg_write_same_ndob.fio               (fio)    ioengine sg only works on block or character devices
#   ssd-steadystate.fio                  agrees   names, groups, ops; notes: 2
#   ssd-test.fio                         agrees   timed: names and groups; notes: 9
#   steadystate.fio                      agrees   timed: names and groups; notes: 1
#   surface-scan.fio                     agrees   names, groups, ops; notes: 8
#   tiobench-example.fio                 agrees   names, groups, ops; notes: 17
#   uring-cmd-ng.fio                     (fio)    ioengine io_uring_cmd only works with nvme ns generic char devices (/dev/ngXnY)
#   uring-cmd-zoned.fio                  (fio)    ioengine io_uring_cmd only works with nvme ns generic char devices (/dev/ngXnY)
#   waitfor.fio                          agrees   timed: names and groups; notes: 1
#   xnvme-compare.fio                    (fio)    fio: failed parsing rw=${FIO_RW}
#   xnvme-zoned.fio                      (fio)    fio: failed parsing rw=${FIO_RW}
#   zbd-rand-write.fio                   (fio)    /var/tmp/fslab-bench.sfwLu8/ex/zbd-rand-write.fio/d/dev_dev_sdj: file/device size 16777216 is smaller than zon
#   zbd-seq-read.fio                     (fio)    /var/tmp/fslab-bench.sfwLu8/ex/zbd-seq-read.fio/d/dev_dev_sdd: file/device size 16777216 is smaller than zone 
#   zipf.fio                             agrees   names, groups, ops
#   local examples: 41: 40 agree, 1 refused, 0 wrong; 45 fio cannot run here
# RESULTS-END
source "$(dirname "$0")/lib.sh"
need fio python3 git mount
[ "$(id -u)" = 0 ] || { echo "bench: needs root (a tmpfs for each example)" >&2; exit 2; }
build_fslab
make_work
FIO_SRC=${FIO_SRC:-/work/.mirror/axboe+fio/repo}
if [ -z "${EXAMPLES:-}" ]; then
    git -C "$FIO_SRC" archive HEAD examples | tar -x -C "$work"
    EXAMPLES=$work/examples
fi
export FSLAB work EXAMPLES
python3 - "$@" <<'PY'
import glob, json, os, random, re, shutil, signal, subprocess, sys
work, FSLAB, ex = os.environ["work"], os.environ["FSLAB"], os.environ["EXAMPLES"]
only = sys.argv[1:]
MIB = 1 << 20
SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

def size_of(v):
    m = re.fullmatch(r"(\d+)([kmgt]?)(i?b?)", v.strip().lower())
    return int(m.group(1)) * SUFFIX[m.group(2)] if m else None

def seconds(v):
    m = re.fullmatch(r"(\d+)(ms|s|m|h|us)?", v.strip().lower())
    if not m:
        return None
    return int(m.group(1)) * {"ms": 1e-3, "us": 1e-6, "s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]

def rewrite(text, scratch):
    """The example with its targets in `scratch` and its sizes and times capped."""
    prepared = []
    cap = 16 * MIB
    out = []
    rated = re.search(r"^\s*(rate|rate_iops|ratemin|rate_min)\s*=", text, re.M)
    if rated and not re.search(r"^\s*(runtime|timeout)\s*=", text, re.M):
        out.append("[global]\nruntime=2s")
    for line in text.splitlines():
        body = line.split(";")[0].split("#")[0]
        m = re.match(r"\s*([\w-]+)\s*=\s*(.*?)\s*$", body)
        if m:
            k, v = m.group(1), m.group(2)
            if k == "filename":
                parts = []
                for f in v.split(":"):
                    if f.startswith("/"):
                        n = "dev_" + re.sub(r"\W", "_", f.strip("/"))
                        prepared.append(n)
                        f = os.path.join(scratch, n)
                    parts.append(f)
                line = "filename=" + ":".join(parts)
            elif k == "directory":
                line = "directory=" + scratch
            elif k in ("size", "filesize", "io_size", "io_limit") and (size_of(v) or 0) > cap:
                line = f"{k}={cap >> 20}m"
            elif k in ("runtime", "timeout", "startdelay") and (seconds(v) or 0) > 1:
                line = f"{k}=1s"
            elif k == "loops" and v.isdigit() and int(v) > 2:
                line = "loops=2"
            elif k in ("nrfiles", "nr_files") and v.isdigit() and int(v) > 256:
                line = f"{k}=256"
            elif k == "ramp_time" and (seconds(v) or 0) > 0.2:
                line = f"{k}=200ms"
        out.append(line)
    return "\n".join(out) + "\n", sorted(set(prepared))

def jobs_of(stdout):
    try:
        j = json.loads(stdout[stdout.index("{"):])
    except ValueError:
        return None
    return [(x["jobname"], x["groupid"], x["read"]["total_ios"], x["write"]["total_ios"]) for x in j["jobs"]]

def run(tool, path, scratch, prepared):
    d = os.path.join(scratch, "d")
    os.makedirs(d, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "fslab-examples", d], check=True)
    try:
        return run_in(tool, path, scratch, prepared, d)
    finally:
        # a stopped fio's last processes may still hold it for a moment
        if subprocess.run(["umount", d], stderr=subprocess.DEVNULL).returncode != 0:
            subprocess.run(["umount", "-l", d])

def run_in(tool, path, scratch, prepared, d):
    for n in prepared:
        with open(os.path.join(d, n), "wb") as f:
            f.write(random.Random(n).randbytes(16 * MIB))
    cmd = ["fio"] if tool == "fio" else [FSLAB, "fio", "--quiet", "--force-overwrite"]
    cmd += [path, "--output-format=json"]
    # output to files, not pipes: fio's job processes (each in a session of
    # its own) may outlive a stopped run; they are found by the example's
    # scratch path in their command line and stopped by pid
    with open(os.path.join(scratch, "out"), "w+") as o, open(os.path.join(scratch, "err"), "w+") as e:
        p = subprocess.Popen(cmd, cwd=d, stdout=o, stderr=e, start_new_session=True)
        try:
            code = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            code, e = -1, None
        for pid in subprocess.run(["pgrep", "-f", path], capture_output=True, text=True).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        p.wait()
        if e is None:
            return -1, "", "still running after 60 s (stopped)"
        o.seek(0)
        e.seek(0)
        return code, o.read(), e.read()

def emit(r):
    print(f"{r[0]:36} {r[1]:8} {r[2]}", flush=True)

counts = {"agrees": 0, "refused": 0, "WRONG": 0, "(fio)": 0}
for f in sorted(glob.glob(ex + "/*.fio")):
    name = os.path.basename(f)
    if only and not any(o in name for o in only):
        continue
    scratch = os.path.join(work, "ex", name)
    os.makedirs(scratch, exist_ok=True)
    text, prepared = rewrite(open(f).read(), os.path.join(scratch, "d"))
    if "/dev/" in "\n".join(l.split(";")[0].split("#")[0] for l in text.splitlines()):
        emit((name, "(fio)", "still names /dev/ after the rewrite: skipped"))
        counts["(fio)"] += 1
        shutil.rmtree(scratch, ignore_errors=True)
        continue
    path = os.path.join(scratch, name)
    with open(path, "w") as out:
        out.write(text)
    # fio 3.33 itself fails now and then here: its io_submit_mode=offload
    # deadlocks about one run in three, its net sender dies of SIGPIPE or a
    # double free: up to eight tries, the peer's best
    for _ in range(8):
        code, out, err = run("fio", path, scratch, prepared)
        fio = jobs_of(out) if code == 0 else None
        if fio is not None:
            break
    if fio is None:
        why = (err.strip().splitlines() or ["exit %d" % code])[0]
        emit((name, "(fio)", why[:110]))
        counts["(fio)"] += 1
        shutil.rmtree(scratch, ignore_errors=True)
        continue
    code, out, err = run("fslab", path, scratch, prepared)
    lines = err.strip().splitlines()
    if code == 2 and len(lines) == 1:
        cls, why = "refused", re.sub(r"^fslab: error: ", "", lines[0])
    elif code != 0:
        cls, why = "WRONG", f"exit {code}: {' | '.join(lines)[:150]}"
    else:
        ours = jobs_of(out)
        timed = re.search(r"^\s*(time_based|runtime)", text, re.M) is not None
        loose = re.search(r"bssplit|bsrange|bs=\d+\w*-", text) is not None
        mixed = re.search(r"rw=(rand)?rw|readwrite=(rand)?rw|randrw|rwmix", text) is not None
        tol = 0.10 if loose else 0.02
        def close(a, b, slack=0.0):
            return abs(a - b) <= max(2, tol * max(a, b) + slack)
        def job_close(a, b):
            # a mix's directions are binomial draws: 4 standard deviations
            # of the difference of two runs' draws beside the total's bound
            n = a[2] + a[3]
            p = a[2] / n if n else 0.5
            slack = 4 * (2 * n * p * (1 - p)) ** 0.5 if mixed else 0.0
            return close(n, b[2] + b[3]) and close(a[2], b[2], slack) and close(a[3], b[3], slack)
        if ours is None:
            cls, why = "WRONG", "no JSON from fslab"
        elif [x[:2] for x in fio] != [x[:2] for x in ours]:
            cls, why = "WRONG", f"jobs: fio {[x[:2] for x in fio]} fslab {[x[:2] for x in ours]}"
        elif not timed and not all(job_close(a, b) for a, b in zip(fio, ours)):
            cls, why = "WRONG", f"ops: fio {[x[2:] for x in fio]} fslab {[x[2:] for x in ours]}"
        else:
            cls, why = "agrees", ("timed: names and groups" if timed else "names, groups, ops") + (
                "; notes: " + str(len(lines)) if lines else "")
    counts[cls] += 1
    emit((name, cls, why.replace(scratch + "/", "")[:160]))
    shutil.rmtree(scratch, ignore_errors=True)
print(f"local examples: {counts['agrees'] + counts['refused'] + counts['WRONG']}: "
      f"{counts['agrees']} agree, {counts['refused']} refused, {counts['WRONG']} wrong; "
      f"{counts['(fio)']} fio cannot run here")
PY
