#!/usr/bin/env bash
# Fetch NVIDIA's real arm64 driver user space (535, a CUDA 12.2 driver), the arm64 CUDA 11.8
# runtime, libunwind and jansson (the command's arm64 build links it) from Debian's archive into
# a cache, as tests/realstack/fetch.sh does for x86-64: nothing installed, the system's apt
# configuration untouched. The aarch64 suite
# (make check-arm64, t_38) runs them under qemu-aarch64.
#
#   tests/arm64/fetch.sh [CACHE]      (default: $CUDASHIM_ARM64 or ~/.cache/cudashim-arm64)
#
# Prints the cache's root (the directory holding usr/lib/aarch64-linux-gnu) on success.
set -euo pipefail

cache=${1:-${CUDASHIM_ARM64:-$HOME/.cache/cudashim-arm64}}
packages=(libcuda1 libnvidia-ptxjitcompiler1 libcudart11.0 libunwind8 liblzma5 libjansson4 libjansson-dev)
. "$(dirname "$0")/../apt_cache.sh"
APT_ARCH=arm64 fetch_packages "$cache" "main contrib non-free non-free-firmware" "${packages[@]}" || exit 77
