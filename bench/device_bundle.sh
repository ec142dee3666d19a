#!/usr/bin/env bash
# Packs binaries built here for a lent machine that has CUDA and torch but
# not tfd's libraries (bench/big_host_check.sh, bench/gpu_check.sh and
# bench/cpu_targets_check.sh run them there): each binary stripped into
# DIR/bin, the shared libraries they need from outside the C runtime into
# DIR/libs, UCX's transport modules into DIR/libs/ucx, all in DIR.tar.xz
# (binaries compress about 4x, and what travels to the machine is limited).
#
#   meson setup build-dev -Dcpu=x86-64-v3 -Dgpu_archs=90 -Dcuda=enabled
#   ninja -C build-dev daemon/tfd bench/train_bench ...
#   bench/device_bundle.sh build-dev devbundle/big daemon/tfd bench/train_bench ...
#
# The C and C++ runtimes stay the host's (newer, and what its torch needs):
# the scripts set LD_LIBRARY_PATH for tfd's binaries only.
set -euo pipefail
build=${1:?usage: device_bundle.sh BUILD DIR TARGET...}
dir=${2:?usage: device_bundle.sh BUILD DIR TARGET...}
shift 2
rm -rf "$dir" "$dir.tar.xz"
mkdir -p "$dir/bin" "$dir/libs/ucx"
for target in "$@"; do
  strip -o "$dir/bin/$(basename "$target")" "$build/$target"
done
runtime='/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so'
# OpenBLAS is loaded by the first product (kernels/math/openblas.h), not
# linked, so ldd does not list it: it and what it needs go too.
blas=/usr/lib/x86_64-linux-gnu/openblas-serial/libopenblas.so.0
{ ldd "$dir"/bin/*; if [[ -e $blas ]]; then echo "blas => $blas"; ldd "$blas"; fi; } |
  awk '/=> \// { print $3 }' | sort -u | { grep -vE "$runtime" || true; } |
  while read -r lib; do cp -L "$lib" "$dir/libs/"; done
for module in /lib/x86_64-linux-gnu/ucx/*.so.0; do cp -L "$module" "$dir/libs/ucx/"; done
tar -C "$dir" -cJf "$dir.tar.xz" .
du -sh "$dir" "$dir.tar.xz"
