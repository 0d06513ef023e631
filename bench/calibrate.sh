#!/usr/bin/env bash
# How long `fslab calibrate --fresh` takes (issue 32: at most 30 s; it is
# about a second), five times, with the card's own noise figure.
#
#   bench/calibrate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
for i in 1 2 3 4 5; do
    s=$(date +%s.%N)
    ./target/release/fslab calibrate --fresh >/dev/null
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { t = e - s; printf "run %d: %.2f s%s\n", '"$i"', t, (t <= 30 ? "" : "  OVER 30 s") }'
done
