#!/usr/bin/env bash
# Fetches Debian's cloud kernels 6.1 and 6.12 (the packages, with apt; no
# other network) and unpacks them for examples/seed-kernel-ab.toml and the
# tests of kernels in virtual machines:
#
#   $FSLAB_KERNELS/6.1/vmlinuz  -> boot/vmlinuz-6.1.0-N-cloud-amd64
#   $FSLAB_KERNELS/6.1/modules  -> lib/modules/6.1.0-N-cloud-amd64
#   $FSLAB_KERNELS/6.12/...       the same for 6.12
#
# FSLAB_KERNELS defaults to /var/cache/fslab/kernels. A kernel already there
# is kept. Needs root (dpkg-deb, the cache directory) and `apt-get update`
# done once.
set -euo pipefail
dest=${FSLAB_KERNELS:-/var/cache/fslab/kernels}
mkdir -p "$dest"

fetch() {
    local name=$1 pattern=$2 pkg tmp v
    [ -e "$dest/$name/vmlinuz" ] && return 0
    pkg=$(apt-cache search --names-only "$pattern" | awk '{print $1}' | sort -V | tail -1)
    if [ -z "$pkg" ]; then
        echo "fetch-kernels: no Debian package matches $pattern (run apt-get update first)" >&2
        return 1
    fi
    tmp=$(mktemp -d "$dest/.fetch.XXXXXX")
    chmod 755 "$tmp"
    (cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1) || {
        rm -rf "$tmp"
        echo "fetch-kernels: apt-get download $pkg failed" >&2
        return 1
    }
    mkdir "$tmp/root"
    dpkg-deb -x "$tmp"/*.deb "$tmp/root"
    v=$(ls "$tmp/root/lib/modules")
    ln -s "boot/vmlinuz-$v" "$tmp/root/vmlinuz"
    ln -s "lib/modules/$v" "$tmp/root/modules"
    rm -rf "${dest:?}/$name"
    mv "$tmp/root" "$dest/$name"
    rm -rf "$tmp"
    echo "fetch-kernels: $name is $pkg ($v) in $dest/$name"
}

fetch 6.1 '^linux-image-6\.1\.0-[0-9]+-cloud-amd64$'
fetch 6.12 '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$'
