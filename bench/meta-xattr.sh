#!/usr/bin/env bash
# Seed experiment 1 side by side: file creation on ext4 (-I 512) and XFS
# (-i size=512) loop filesystems, without and with a 256-byte user xattr per
# file (bonnie++ -n 100:256:256:10 semantics). Fresh mkfs for every run.
#   bench/meta-xattr.sh [N:MAX:MIN:DIRS]     (needs root, mkfs.ext4, mkfs.xfs)
source "$(dirname "$0")/lib.sh"
need mkfs.ext4 mkfs.xfs losetup python3
[ "$(id -u)" = 0 ] || { echo "bench: needs root (mounts)" >&2; exit 2; }
spec=${1:-100:256:256:10}
build_fslab
make_work
mnt="$work/mnt"; mkdir -p "$mnt"; mnts+=("$mnt")
attach_loop 4G
for fs in ext4 xfs; do
    for x in none user.test:256; do
        case $fs in
            ext4) mkfs.ext4 -q -F -I 512 "$dev" ;;
            xfs) mkfs.xfs -q -f -i size=512 "$dev" ;;
        esac
        mount "$dev" "$mnt"
        xa=(); [ "$x" = none ] || xa=(--xattr "$x")
        "$FSLAB" meta --target "$mnt" --bonnie "$spec" "${xa[@]}" --quiet --output "json:$work/$fs-${x%%:*}.json"
        umount "$mnt"
    done
done
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
print(f"{'fs':5} {'phase':14} {'no xattr':>12} {'xattr 256 B':>12} {'ratio':>6}   %CPU without/with")
for fs in ["ext4", "xfs"]:
    a = json.load(open(f"{w}/{fs}-none.json"))["cells"][0]["directions"]
    b = json.load(open(f"{w}/{fs}-user.test.json"))["cells"][0]["directions"]
    for da, db in zip(a, b):
        print(f"{fs:5} {da['phase']:14} {da['iops']:10.0f}/s {db['iops']:10.0f}/s {db['iops'] / da['iops']:6.2f}"
              f"   {da['cpu_percent']:.0f}/{db['cpu_percent']:.0f}")
PY
