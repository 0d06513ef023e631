#!/usr/bin/env bash
# Regenerates fslab's BPF object from bpf/anatomy.bpf.c. The object is
# checked in (src/telemetry/anatomy/anatomy.bpf.o) so that building fslab
# needs no C toolchain; run this after changing the C source and commit both.
# Needs Debian's clang and libbpf-dev (bpf_helpers.h).
set -euo pipefail
cd "$(dirname "$0")/.."
out=src/telemetry/anatomy/anatomy.bpf.o
clang -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 \
    -I/usr/include/x86_64-linux-gnu -c bpf/anatomy.bpf.c -o "$out.tmp"
# debug line info is kept out (smaller, reproducible); BTF stays (maps need it)
llvm-strip -g "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
