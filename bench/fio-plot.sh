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
# and a line graph of fslab fio's logs (bw, iops, lat every 500 ms), named as fio-plot's bench-fio names them
logs=$out/logs
mkdir -p "$logs"
p=randread-iodepth-1-numjobs-1
(cd "$logs" && "$FSLAB" fio --name=fp --rw=randread --bs=4k --size=64m --directory="$target" --runtime="${RUNTIME}" \
    --time_based --log_avg_msec=500 --write_bw_log=$p --write_iops_log=$p --write_lat_log=$p --quiet >/dev/null)
fio-plot -i "$logs" -T "fslab fio logs" -g -r randread -d 1 -n 1 -t bw iops lat -o "$out/fslab-logs.png"
echo "log graph: $out/fslab-logs.png"
