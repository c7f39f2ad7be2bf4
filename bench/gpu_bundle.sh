#!/usr/bin/env bash
# gpu_bundle.sh - builds gpuplan with the CUDA backend on this machine
# (nvcc and the Debian packages `make deps` installs) into BUILD (default
# build-gpu) and copies beside it, in BUILD/lib/, every shared library the
# binary needs that is neither glibc's nor CUDA's (GLPK, libcsv, cJSON,
# Open MPI and what they load), and libstdc++ and libgcc in BUILD/lib/
# fallback/ (used only where the machine's own are missing or too old),
# so that bench/gpu_check.sh can run it on a GPU machine that has the CUDA
# libraries but not the build's packages.  BUILD/bundle.txt records what it was built from: the check
# uses the bundle only while the sources still hash the same.
#
# The GPU machine needs glibc at least as new as the one named in
# bundle.txt, and cuBLAS, the CUDA runtime and NCCL of the same major
# version as this nvcc (in its CUDA folder, or from NVIDIA's Python
# wheels, which gpu_check.sh also searches).
#
#   bench/gpu_bundle.sh [BUILD_DIR]
#   bench/gpu_bundle.sh --hash          (prints the sources' hash only)
set -eu
cd "$(dirname "$0")/.." || exit 1

# source_hash: one hash over everything the binary is built from
source_hash() {
	find Makefile common pricing simulator planner executor cli -type f \
		\( -name Makefile -o -name '*.c' -o -name '*.h' -o -name '*.cu' \) |
		LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16
}
if [ "${1:-}" = --hash ]; then
	source_hash
	exit 0
fi
BUILD=${1:-build-gpu}

make -s deps
make -j"$(nproc)" BUILD="$BUILD" CUDA=yes >/dev/null
rm -rf "$BUILD/lib"
mkdir -p "$BUILD/lib/fallback"
# ldd lines "libX.so.N => /path (0x...)": keep all but glibc, the loader
# and the CUDA toolkit's own
ldd "$BUILD/gpuplan" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
	while read -r soname path; do
		case "$soname" in
		libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) continue ;;
		libcublas* | libcudart* | libnccl* | libcuda.so*) continue ;;
		esac
		case "$soname" in
		libstdc++.so.* | libgcc_s.so.*) cp -L "$path" "$BUILD/lib/fallback/$soname" ;;
		*) cp -L "$path" "$BUILD/lib/$soname" ;;
		esac
	done
glibc=$(for f in "$BUILD/gpuplan" "$BUILD"/lib/*.so*; do objdump -T "$f"; done 2>/dev/null |
	grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
cat >"$BUILD/bundle.txt" <<EOF
source_hash $(source_hash)
commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo -modified)
built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release 2>/dev/null && echo "$ID-$VERSION_ID")
nvcc $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version | tail -1)
needs $glibc, $(ldd "$BUILD/gpuplan" | awk '/cublas|cudart|nccl/ { printf "%s ", $1 }')
EOF
echo "bundle: $BUILD/gpuplan and $(find "$BUILD/lib" -name '*.so*' | wc -l) libraries in $BUILD/lib ($(du -sh "$BUILD" | cut -f1) in all)"
cat "$BUILD/bundle.txt"
