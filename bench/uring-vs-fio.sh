#!/usr/bin/env bash
# fslab --engine uring vs fio --ioengine=io_uring on the same work, in one run,
# alternating the tools; prints medians, ratios and the latency agreement.
#
#   bench/uring-vs-fio.sh           (the O_DIRECT comparison needs root and losetup)
#   ROUNDS=5 RUNTIME=10 bench/uring-vs-fio.sh
#
# Targets (issue 3): 4 KiB random reads at QD32 of a page-cached file >= 1.1x
# fio; with O_DIRECT on a loop device >= 1.0x fio, and clat p50/p99 within 10%
# (IO_ROUNDS rounds, see lib.sh).
# Both tools get the same settings: depth 32, submit each I/O at once (fio's
# and fslab's default batch of 1), reap as completions arrive.
source "$(dirname "$0")/lib.sh"
need fio python3
build_fslab
make_work

echo "== 4 KiB random reads, QD32, page-cached 1 GiB file, ${RUNTIME}s x $ROUNDS rounds"
f="$work/cached.dat"
head -c 1G /dev/urandom > "$f"
cat "$f" > /dev/null
fio_r=(); fsl_r=()
for i in $(seq "$ROUNDS"); do
    fio --name=u --ioengine=io_uring --iodepth=32 --filename="$f" --size=1g --bs=4k --rw=randread \
        --invalidate=0 --runtime="$RUNTIME" --time_based --output-format=json --output="$work/fio.json" >/dev/null
    fio_r+=("$(json "$work/fio.json" "d['jobs'][0]['read']['iops']")")
    "$FSLAB" io --target "$f" --engine uring --iodepth 32 --rw randread --bs 4k --runtime "${RUNTIME}s" \
        --quiet --output "json:$work/fslab.json"
    fsl_r+=("$(json "$work/fslab.json" "d['cells'][0]['directions'][0]['iops']")")
    echo "  round $i: fio ${fio_r[-1]%.*}  fslab ${fsl_r[-1]%.*}"
done
fio_m=$(median "${fio_r[@]}"); fsl_m=$(median "${fsl_r[@]}")
echo "  median IOPS: fio io_uring $fio_m, fslab uring $fsl_m"
echo "  RATIO fslab/fio cached QD32 = $(ratio "$fsl_m" "$fio_m") (target >= 1.1)"

if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null; then
    echo "== O_DIRECT comparison skipped: needs root and losetup"
    exit 0
fi
echo "== 4 KiB random reads, QD32, O_DIRECT, raw loop device (direct-io on), ${RUNTIME}s x $IO_ROUNDS rounds"
preconditioned_loop
fio_i=(); fsl_i=(); fio_p50=(); fsl_p50=(); fio_p99=(); fsl_p99=()
run_fio() {
    fio --name=u --ioengine=io_uring --iodepth=32 --filename="$dev" --direct=1 --size=1g --bs=4k --rw=randread \
        --runtime="$RUNTIME" --time_based --output-format=json --output="$work/fio.json" >/dev/null
    fio_i+=("$(json "$work/fio.json" "d['jobs'][0]['read']['iops']")")
    fio_p50+=("$(json "$work/fio.json" "d['jobs'][0]['read']['clat_ns']['percentile']['50.000000']")")
    fio_p99+=("$(json "$work/fio.json" "d['jobs'][0]['read']['clat_ns']['percentile']['99.000000']")")
}
run_fslab() {
    "$FSLAB" io --target "$dev" --allow-device --direct --engine uring --iodepth 32 --rw randread --bs 4k \
        --runtime "${RUNTIME}s" --quiet --output "json:$work/fslab.json"
    fsl_i+=("$(json "$work/fslab.json" "d['cells'][0]['directions'][0]['iops']")")
    fsl_p50+=("$(json "$work/fslab.json" "d['cells'][0]['directions'][0]['clat']['percentiles']['50']")")
    fsl_p99+=("$(json "$work/fslab.json" "d['cells'][0]['directions'][0]['clat']['percentiles']['99']")")
}
for i in $(seq "$IO_ROUNDS"); do
    if ((i % 2)); then run_fio; run_fslab; else run_fslab; run_fio; fi
    echo "  round $i: fio ${fio_i[-1]%.*} IOPS clat p50 ${fio_p50[-1]} p99 ${fio_p99[-1]} ns |" \
        "fslab ${fsl_i[-1]%.*} IOPS clat p50 ${fsl_p50[-1]} p99 ${fsl_p99[-1]} ns"
done
fio_m=$(median "${fio_i[@]}"); fsl_m=$(median "${fsl_i[@]}")
echo "  median IOPS: fio $fio_m, fslab $fsl_m (ratio of medians $(ratio "$fsl_m" "$fio_m"))"
echo "  RATIO fslab/fio O_DIRECT QD32 = $(median_ratio "${fsl_i[*]}" "${fio_i[*]}") (median of per-round ratios; target >= 1.0)"
echo "  RATIO clat p50 fslab/fio = $(median_ratio "${fsl_p50[*]}" "${fio_p50[*]}") (target 0.9..1.1)"
echo "  RATIO clat p99 fslab/fio = $(median_ratio "${fsl_p99[*]}" "${fio_p99[*]}") (target 0.9..1.1)"
