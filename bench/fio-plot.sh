#!/usr/bin/env bash
# fio-plot (PyPI `fio-plot`) draws a bar graph from fslab's fio-json output:
# 4 KiB random reads with io_uring at queue depths 1..32, one file per depth
# named as fio-plot expects (<rw>-<iodepth>-<numjobs>.json).
#   pip install fio-plot && bench/fio-plot.sh [TARGET_DIR]
source "$(dirname "$0")/lib.sh"
need fio-plot
build_fslab
target=${1:-/var/tmp}
out=$(mktemp -d /var/tmp/fslab-fioplot.XXXXXX)
for d in 1 2 4 8 16 32; do
    "$FSLAB" io --target "$target" --engine uring --iodepth "$d" --rw randread --size 64m --runtime "${RUNTIME}s" \
        --quiet --output "fio-json:$out/randread-$d-1.json"
done
fio-plot -i "$out" -T "fslab randread 4k io_uring" -l -r randread -n 1 -d 1 2 4 8 16 32 -o "$out/fslab.png"
echo "graph: $out/fslab.png"
