#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets: the NBENCH load-file
# parser, the replay's wildcard matcher and path checks, the fio job parser,
# the plan-file parser and the unit parser) for
# FUZZ_SECONDS each (default 600, the issue's 10 minutes), seeded with the
# project's own example plans, job files and a load file; prints runs and
# coverage per target and fails on the first crash (its input is kept in
# fuzz/artifacts/TARGET/).
#
#   cargo install cargo-fuzz && bench/fuzz.sh
#   FUZZ_SECONDS=15 bench/fuzz.sh          (what .ci/run does)
#
# cargo fuzz needs nightly rustc flags; RUSTC_BOOTSTRAP=1 lets the stable
# toolchain (the only one here) accept them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${FUZZ_SECONDS:-600}
command -v cargo-fuzz >/dev/null || { echo "bench: needs cargo-fuzz (cargo install cargo-fuzz)" >&2; exit 2; }
cd "$root/fuzz"
export RUSTC_BOOTSTRAP=1
mkdir -p corpus/loadfile corpus/replay_paths corpus/fio_job corpus/plan_file corpus/units
# the samba plan reads the 458k-line client.txt on every run: not a useful seed
for f in seed-metadata-xattr seed-raw-vs-fs seed-create-under-stream; do cp "$root/examples/$f.toml" corpus/plan_file/; done
cp "$root"/tests/fio-jobs/*.fio corpus/fio_job/
# fio_job: a job file, then after a line '--' command-line arguments
printf '[global]\nbs=$pagesize*2 ; c\nsize=(1m*4)#x\n[a]\nioengine=filecreate\nnrfiles=$ncpus\n--\n--name=global --rw=write --name=b --ioengine=net\n' > corpus/fio_job/cli-keywords
printf '[a]\nioengine=dirstat\nstat_type=lstat\niodepth=((2+3)*4)^2%%7\n--\n--directory=/nonexistent --name=c --bs=(4k-1)\n' > corpus/fio_job/cli-dirstat
printf 'Mkdir "\\clients" NT_STATUS_OK\nNTCreateX "\\clients\\client1\\f" 0x40 0x2 3 NT_STATUS_OK\nWriteX 3 0 100 100 NT_STATUS_OK\nLOOP 3\nReadX 3 0 100 100 NT_STATUS_OK\nENDLOOP\nClose 3 NT_STATUS_OK\n' > corpus/loadfile/seed.load
# replay_paths: byte 0 splits pattern from name; the whole input is also a path
printf '\x08FILLER.*filler.000' > corpus/replay_paths/mask
printf '\x1d*a*a*a*a*a*a*a*a*a*a*a*a*a*abaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' > corpus/replay_paths/stars
printf '\\clients\\client1\\~dmtmp\\ACCESS\\FASTENER.LDB' > corpus/replay_paths/path
printf '\\clients\\up\\out\\x' > corpus/replay_paths/symlinks
printf '4k' > corpus/units/size; printf '1.5s' > corpus/units/duration; printf '90%%' > corpus/units/percent
cargo fuzz build -O
for t in loadfile replay_paths fio_job plan_file units; do
    echo "== $t: ${secs}s"
    log=$(mktemp)
    if ! cargo fuzz run -O "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=4096 >"$log" 2>&1; then
        tail -40 "$log"
        echo "FUZZ $t: CRASH (input in fuzz/artifacts/$t/)"
        exit 1
    fi
    grep -E "^Done|DONE" "$log" | tail -2
    echo "FUZZ $t: no crash"
    rm -f "$log"
done
