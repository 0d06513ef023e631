# Shared helpers for bench scripts (sourced).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
FSLAB=${FSLAB:-$root/target/release/fslab}
ROUNDS=${ROUNDS:-3}
# The fio the fio benches run: the packaged one, or FIO=path, e.g. one built
# from fio's source with its own flags (bench/build-fio.sh), which is faster.
FIO=${FIO:-fio}
# a path, made absolute: the benches run fio from other directories
case $FIO in */*) FIO="$(cd "$(dirname "$FIO")" && pwd)/$(basename "$FIO")" ;; esac
RUNTIME=${RUNTIME:-5}

build_fslab() {
    if [ -z "${FSLAB_PREBUILT:-}" ]; then
        (cd "$root" && cargo build --release -q)
    fi
}

need() {
    for t in "$@"; do
        command -v "$t" >/dev/null || { echo "bench: needs $t (apt-get install -y $t)" >&2; exit 2; }
    done
}

# jq-free JSON field access: json FILE 'python expression on d'
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# median of the arguments
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

ratio() { python3 -c "print(f'{float($1)/float($2):.2f}')"; }

# A scratch directory for the script, and what it mounts and attaches there:
# everything is undone on exit, also after Ctrl-C. Call once: make_work
make_work() {
    work=$(mktemp -d /var/tmp/fslab-bench.XXXXXX)
    mnts=(); dev=""
    trap cleanup_work EXIT INT TERM
}
cleanup_work() {
    for m in "${mnts[@]}"; do mountpoint -q "$m" && { umount "$m" 2>/dev/null || umount -l "$m"; }; done
    [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
    rm -rf "$work"
}

# attach_loop SIZE [losetup options]: a loop device over a new image in $work, in $dev.
attach_loop() {
    truncate -s "$1" "$work/img"
    shift
    dev=$(losetup --find --show "$@" "$work/img")
}

# A direct-io loop device written fully first: a sparse image reads holes at memory speed.
preconditioned_loop() {
    attach_loop 1G --direct-io=on
    dd if=/dev/urandom of="$dev" bs=1M count=1024 oflag=direct status=none
}

# Rounds for comparisons bound by the device. The virtual disk of a shared
# machine drifts by ±10 % over tens of seconds, so these alternate the tools
# over more rounds, swap which goes first every round, and report the median
# of the per-round ratios (each compares runs seconds apart) beside the ratio
# of the medians.
IO_ROUNDS=${IO_ROUNDS:-9}

# median_ratio "A1 A2 ..." "B1 B2 ...": the median of Ai/Bi, two decimals.
median_ratio() {
    python3 -c "import statistics,sys; a=sys.argv[1].split(); b=sys.argv[2].split(); print(f'{statistics.median(float(x)/float(y) for x,y in zip(a,b)):.2f}')" "$1" "$2"
}
