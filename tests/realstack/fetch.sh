#!/usr/bin/env bash
# Fetch NVIDIA's real driver user space (535, a CUDA 12.2 driver) and a CUDA 11.8 stack from
# Debian's non-free component into a cache directory, without touching the system's apt
# configuration or installing anything: apt-get runs on a private sources file and private
# lists, `apt-get download` fetches the .deb files, and `dpkg-deb -x` unpacks them in the cache.
#
#   tests/realstack/fetch.sh [CACHE]      (default: $CUDASHIM_REALSTACK or ~/.cache/cudashim-realstack)
#
# Prints the cache's root (the directory holding usr/lib/x86_64-linux-gnu) on success.
set -euo pipefail

cache=${1:-${CUDASHIM_REALSTACK:-$HOME/.cache/cudashim-realstack}}
packages=(libcuda1 libnvidia-ptxjitcompiler1 libcudart11.0 libcublas11 libcublaslt11 libnvrtc11.2
          libcufft10 libcusparse11 libcupti11.8)
. "$(dirname "$0")/../apt_cache.sh"
fetch_packages "$cache" "main contrib non-free non-free-firmware" "${packages[@]}" || exit 77
