# Shared helpers for bench scripts (sourced).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
FSLAB=${FSLAB:-$root/target/release/fslab}
ROUNDS=${ROUNDS:-3}
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
