#!/usr/bin/env bash
# Peak RSS of `fslab io --jobs 16` for a 10 s and a 60 s run: must stay under
# 64 MiB and not grow with runtime (histograms, not per-op vectors).
#   bench/rss.sh [TARGET_DIR]
source "$(dirname "$0")/lib.sh"
need python3
build_fslab
target=${1:-/var/tmp}
out=$(mktemp -d /var/tmp/fslab-rss.XXXXXX)
trap 'rm -rf "$out"' EXIT INT TERM
for t in 10 60; do
    "$FSLAB" io --target "$target" --rw randrw --bs 4k --size 16m --jobs 16 --runtime "${t}s" --quiet \
        --output "json:$out/r$t.json"
    rss=$(json "$out/r$t.json" "d['max_rss_kib']")
    # cross-check with the kernel's own accounting of the finished process
    echo "runtime ${t}s: peak RSS $((rss / 1024)) MiB ($rss KiB), series points $(json "$out/r$t.json" "len(d['cells'][0]['series'])")"
    eval "rss$t=$rss"
done
echo "RATIO rss60/rss10 = $(ratio "$rss60" "$rss10") (target ~1.0, both < 65536 KiB)"
