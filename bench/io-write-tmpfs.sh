#!/usr/bin/env bash
# Write throughput of `fslab io --rw write` on tmpfs (memory speed, so the
# cost of filling buffers shows) with its default non-repeating buffers
# (scrambled before every write) against identical buffers (--buffer-pattern:
# what every write carried before the scramble). Rounds alternate the two
# and swap which goes first; the figure is the median of the per-round
# ratios scrambled / identical (target >= 0.95).
#   bench/io-write-tmpfs.sh            (root: mounts its own tmpfs; else /dev/shm)
#   ROUNDS=5 RUNTIME=5 BS="4k 128k" bench/io-write-tmpfs.sh
source "$(dirname "$0")/lib.sh"
need python3
build_fslab
ROUNDS=${ROUNDS:-5}
BS=${BS:-4k 128k}
make_work
if [ "$(id -u)" = 0 ]; then
    mkdir "$work/mnt"
    mount -t tmpfs -o size=2g fslab-bench "$work/mnt"
    mnts+=("$work/mnt")
    target=$work/mnt
else
    target=$(mktemp -d /dev/shm/fslab-bench.XXXXXX)
    trap 'rm -rf "$target"; cleanup_work' EXIT INT TERM
fi
mbs() { # mbs BS [extra flags]: write MB/s of one run
    local bs=$1 out="$work/r.json"
    shift
    "$FSLAB" io --target "$target" --rw write --bs "$bs" --size 256m --runtime "${RUNTIME}s" \
        --quiet --output "json:$out" "$@"
    json "$out" "[x['mb_s'] for x in d['cells'][0]['directions'] if x['dir'] == 'write'][0]"
}
for bs in $BS; do
    ratios=(); scr=(); ident=()
    for r in $(seq "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then
            s=$(mbs "$bs"); i=$(mbs "$bs" --buffer-pattern 0x5a)
        else
            i=$(mbs "$bs" --buffer-pattern 0x5a); s=$(mbs "$bs")
        fi
        scr+=("$s"); ident+=("$i"); ratios+=("$(python3 -c "print($s / $i)")")
        echo "bs $bs round $r: scrambled $s MB/s, identical $i MB/s"
    done
    echo "bs $bs: median scrambled $(median "${scr[@]}") MB/s, identical $(median "${ident[@]}") MB/s"
    echo "RATIO bs=$bs scrambled/identical = $(python3 -c "print(f'{$(median "${ratios[@]}"):.3f}')") (target >= 0.95)"
done
