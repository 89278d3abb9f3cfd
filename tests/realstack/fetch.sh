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
stamp="$cache/.complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]}" ]; then
    echo "$cache/root"
    exit 0
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "fetch: needs apt-get and dpkg-deb" >&2; exit 77; }

. "$(dirname "$0")/../apt_cache.sh"
debian_archive || { echo "fetch: no Debian archive in the apt sources" >&2; exit 77; }
mkdir -p "$cache/debs" "$cache/root"
private_apt "$cache/apt" "$APT_SUITE" main contrib non-free non-free-firmware >/dev/null
cd "$cache/debs"
apt-get "${apt_opts[@]}" download "${packages[@]}" >&2
for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
echo "${packages[*]}" > "$stamp"
echo "$cache/root"
