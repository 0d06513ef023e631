#!/usr/bin/env bash
# fslab replay vs dbench on the same load file, clients, duration and
# filesystem, in one run, without and with xattrs (dbench -x vs --xattr).
# Prints each tool's throughput and the ratio.
#
#   bench/replay-vs-dbench.sh [CLIENTS] [SECONDS]     (default 4 clients, 20 s)
#
# Target (issue 5): fslab >= 1.0x dbench's MB/sec in both. Runs on a tmpfs and,
# as root, on an ext4 loop filesystem.
source "$(dirname "$0")/lib.sh"
need dbench python3
clients=${1:-4}; secs=${2:-20}
lf=/usr/share/dbench/client.txt
[ -f "$lf" ] || { echo "bench: needs $lf (apt-get install dbench)" >&2; exit 2; }
build_fslab
make_work
targets=()
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$work/tmpfs" "$work/ext4"
    mount -t tmpfs -o size=4g tmpfs "$work/tmpfs"; mnts+=("$work/tmpfs"); targets+=("$work/tmpfs")
    attach_loop 4G
    mkfs.ext4 -q -F "$dev"; mount "$dev" "$work/ext4"; mnts+=("$work/ext4"); targets+=("$work/ext4")
else
    mkdir -p "$work/dir"; targets+=("$work/dir")
fi
for t in "${targets[@]}"; do
    fs=$(findmnt -no FSTYPE -T "$t")  # stat -f says "ext2/ext3" for ext4
    for x in "" "-x"; do
        d=$(dbench $x -D "$t" -t "$secs" -c "$lf" "$clients" 2>&1 | awk '/^Throughput/ {print $2}')
        f_args=(); [ -n "$x" ] && f_args=(--xattr)
        "$FSLAB" replay "$lf" --target "$t" --clients "$clients" --time "${secs}s" "${f_args[@]}" --quiet \
            --output "json:$work/r.json"
        f=$(json "$work/r.json" "sum(x['mb_s'] for x in d['cells'][0]['directions'] if x['dir'] in ('ReadX','WriteX'))")
        echo "$fs ${x:-(no -x)}: dbench $d MB/sec, fslab $(printf %.2f "$f") MB/sec, RATIO fslab/dbench = $(ratio "$f" "$d") (target >= 1.0)"
    done
done
