#!/usr/bin/env bash
# Builds fio from its source with fio's own compiler flags, for the benches'
# FIO=: the peer as fast as it honestly can be.
#
#   git clone https://github.com/axboe/fio /var/tmp/fio.git
#   FIO_GIT=/var/tmp/fio.git bench/build-fio.sh          (prints the binary's path)
#   FIO=$(FIO_GIT=/var/tmp/fio.git bench/build-fio.sh) bench/fio-agree.sh
#
# FIO_REF picks the version (default fio-3.33, Debian 12's, so both builds
# read job files alike). Needs gcc, make and libaio-dev (apt-get install -y
# build-essential libaio-dev), or the build has no libaio engine.
#
# Why: Debian's fio 3.33 is built at -O2, where __fill_random_buf keeps its
# four seeds on the stack and reloads them 16 bytes at a time right after
# storing them 8 bytes at a time (a store-forwarding stall: perf annotate
# puts 74% of its samples on the instruction right after that load). fio's own -O3 build keeps them in registers. On
# tests/fio-jobs/agree/02 (1 MiB buffered writes of 66% compressible data,
# refilled every write) Debian's fio ran 16.5k writes/s, the source build
# 27.4k, on the same machine minutes apart.
source "$(dirname "$0")/lib.sh"
need git make gcc
: "${FIO_GIT:?set FIO_GIT to a clone of https://github.com/axboe/fio}"
ref=${FIO_REF:-fio-3.33}
out="$root/target/peer-fio/$ref"
if [ ! -x "$out/fio" ]; then
    rm -rf "$out.tmp"
    mkdir -p "$out.tmp"
    git -C "$FIO_GIT" archive "$ref" | tar -x -C "$out.tmp"
    # --disable-native: the binary runs on any x86-64, as Debian's does
    (cd "$out.tmp" && ./configure --disable-native >&2 && make -j"$(nproc)" >&2)
    rm -rf "$out"
    mv "$out.tmp" "$out"
fi
grep -q libaio < <("$out/fio" --enghelp) || echo "build-fio: no libaio engine (apt-get install -y libaio-dev)" >&2
echo "$out/fio"
