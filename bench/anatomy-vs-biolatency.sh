#!/usr/bin/env bash
# fslab --anatomy's device histogram against biolatency's, on the same run
# (issue 36): 4 KiB O_DIRECT random reads of a loop device while bpftrace
# runs the equivalent of `biolatency -D` (issue -> complete per disk, log2
# buckets of µs; Debian's biolatency-bpfcc needs kernel headers this machine
# lacks). For p50, p90, p99 and p99.9 of that device it prints the log2
# bucket each tool puts the percentile in; they agree when the buckets are at
# most one apart.
#
#   bench/anatomy-vs-biolatency.sh            (needs root, bpftrace, losetup)
#   RUNTIME=20s BS=64k bench/anatomy-vs-biolatency.sh
source "$(dirname "$0")/lib.sh"
need bpftrace losetup python3
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF)" >&2; exit 2; }
RUNTIME=${RUNTIME:-10s}
BS=${BS:-4k}
build_fslab
make_work
attach_loop 1G
# data in the backing file, so the reads are not of holes
dd if=/dev/urandom of="$dev" bs=1M count=1024 oflag=direct status=none
mm=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
kdev=$(( (${mm%%:*} << 20) | ${mm##*:} ))

# bpftrace finds tracepoints in tracefs: mounted for the run when nothing is
if ! awk '$2 == "/sys/kernel/tracing"' /proc/self/mounts | grep -q .; then
    mount -t tracefs fslab-bench /sys/kernel/tracing && mnts+=(/sys/kernel/tracing)
fi
bpftrace -e "tracepoint:block:block_rq_issue /args->dev == $kdev/ { @s[args->sector] = nsecs; }
tracepoint:block:block_rq_complete /args->dev == $kdev && @s[args->sector]/ {
  @usecs = hist((nsecs - @s[args->sector]) / 1000); delete(@s[args->sector]); }
END { clear(@s); }" >"$work/bpftrace.out" 2>"$work/bpftrace.err" &
bt=$!
# wait until its probes are attached
for _ in $(seq 1 100); do grep -q 'Attaching' "$work/bpftrace.out" && break; sleep 0.1; done
sleep 1
"$FSLAB" io --target "$dev" --allow-device --rw randread --bs "$BS" --direct --runtime "$RUNTIME" \
    --anatomy --quiet --no-telemetry --output "json:$work/io.json"
sleep 0.5
kill -INT "$bt"; wait "$bt" || true

python3 - "$work/io.json" "$work/bpftrace.out" "$mm" <<'PY'
import json, math, re, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
devs = [d for d in cell["anatomy"]["devices"] if d["dev"] == sys.argv[3]]
fs = {}
for d in devs:
    for v, n in d["device"]["hist"]["buckets"]:
        fs[v] = fs.get(v, 0) + n
bt = []  # (low_us, high_us, count)
for line in open(sys.argv[2]):
    m = re.match(r"\[(\d+)(K|M)?, (\d+)(K|M)?\)\s+(\d+)", line.strip())
    if m:
        mult = {None: 1, "K": 1024, "M": 1024 * 1024}
        bt.append((int(m[1]) * mult[m[2]], int(m[3]) * mult[m[4]], int(m[5])))
    m = re.match(r"\[(\d+)\]\s+(\d+)", line.strip())
    if m:
        bt.append((int(m[1]), int(m[1]) + 1, int(m[2])))
nf, nb = sum(fs.values()), sum(c for _, _, c in bt)
print(f"requests: fslab {nf}, bpftrace {nb} (fslab counts from its cell's start, bpftrace from its own)")
def log2_bucket_us(ns):
    us = ns // 1000
    return 0 if us < 1 else int(math.log2(us)) + 1
def fs_q(q):
    acc = 0
    for v in sorted(fs):
        acc += fs[v]
        if acc >= q * nf:
            return log2_bucket_us(v), v
def bt_q(q):
    acc = 0
    for lo, hi, c in bt:
        acc += c
        if acc >= q * nb:
            return (0 if lo < 1 else int(math.log2(lo)) + 1), lo, hi
ok = True
for q in (0.5, 0.9, 0.99, 0.999):
    (fb, v), (bb, lo, hi) = fs_q(q), bt_q(q)
    agree = abs(fb - bb) <= 1
    ok &= agree
    print(f"p{q*100:g}: fslab {v/1000:.1f} us (log2 bucket {fb}), bpftrace [{lo}, {hi}) us (bucket {bb}): {'agree' if agree else 'DIFFER'}")
print("device histograms agree within one log2 bucket" if ok else "device histograms DIFFER")
PY
