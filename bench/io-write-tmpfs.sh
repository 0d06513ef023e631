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
# On a busy machine the wall-clock rate follows the other tenants; the
# rate per CPU-second of fslab's own (user + sys) does not, and on tmpfs,
# where a write is a memory copy, it is what the buffers cost.
mbs() { # mbs BS [extra flags]: "wall-MB/s MB-per-CPU-second" of one run
    local bs=$1 out="$work/r.json"
    shift
    "$FSLAB" io --target "$target" --rw write --bs "$bs" --size 256m --runtime "${RUNTIME}s" \
        --quiet --output "json:$out" "$@"
    json "$out" "(lambda c, w: f\"{w['mb_s']:.1f} {w['bytes'] / 1e6 / ((c['cpu']['user_ns'] + c['cpu']['sys_ns']) / 1e9):.1f}\")(d['cells'][0], [x for x in d['cells'][0]['directions'] if x['dir'] == 'write'][0])"
}
for bs in $BS; do
    ratios=(); cratios=(); scr=(); ident=()
    for r in $(seq "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then
            s=$(mbs "$bs"); i=$(mbs "$bs" --buffer-pattern 0x5a)
        else
            i=$(mbs "$bs" --buffer-pattern 0x5a); s=$(mbs "$bs")
        fi
        read -r sw sc <<<"$s"; read -r iw ic <<<"$i"
        scr+=("$sw"); ident+=("$iw")
        ratios+=("$(python3 -c "print($sw / $iw)")"); cratios+=("$(python3 -c "print($sc / $ic)")")
        echo "bs $bs round $r: scrambled $sw MB/s ($sc MB/CPU-s), identical $iw MB/s ($ic MB/CPU-s)"
    done
    echo "bs $bs: median scrambled $(median "${scr[@]}") MB/s, identical $(median "${ident[@]}") MB/s"
    echo "RATIO bs=$bs scrambled/identical = $(python3 -c "print(f'{$(median "${ratios[@]}"):.3f}')") wall, $(python3 -c "print(f'{$(median "${cratios[@]}"):.3f}')") per CPU-second (target >= 0.95)"
done
