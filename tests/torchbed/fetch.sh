#!/usr/bin/env bash
# Fetch a real framework for the test bed: Debian 13's PyTorch 2.6 built for CUDA 12.4
# (python3-torch-cuda, contrib) with everything it depends on and NVIDIA's 550 driver user space
# (non-free), plus Debian 12's 535 (CUDA 12.2) and 470 (CUDA 11.4) drivers, into a cache that
# runs as a chroot. Nothing on the system changes: apt-get runs on a private sources file, private
# lists and an empty package status; `apt-get download` fetches, `dpkg-deb -x` unpacks.
#
#   tests/torchbed/fetch.sh [CACHE]     (default: $CUDASHIM_TORCHBED or ~/.cache/cudashim-torchbed)
#
# Prints the root on success; exit 77 with a reason when it cannot fetch.
set -euo pipefail

cache=${1:-${CUDASHIM_TORCHBED:-$HOME/.cache/cudashim-torchbed}}
framework=(python3-torch-cuda libcuda1 libnvidia-ptxjitcompiler1 libnvidia-ml1 python3-numpy)
old_drivers=(libcuda1 libnvidia-tesla-470-cuda1)
recipe="torch:${framework[*]} drivers:${old_drivers[*]} layout:2"
stamp="$cache/.complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
    echo "$cache/root"
    exit 0
fi
for tool in apt-get dpkg-deb awk; do
    command -v $tool >/dev/null || { echo "torchbed fetch: needs $tool" >&2; exit 77; }
done

arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || { echo "torchbed fetch: the CUDA packages are amd64 only (this is $arch)" >&2; exit 77; }
. "$(dirname "$0")/../apt_cache.sh"
debian_archive || { echo "torchbed fetch: no Debian archive in the apt sources" >&2; exit 77; }
# apt on a private state for one suite: $1 = name (a folder of $cache/apt), $2 = suite.
apt_for() {
    private_apt "$cache/apt/$1" "$2" main contrib non-free non-free-firmware ||
        { echo "torchbed fetch: apt-get update ($2) failed" >&2; exit 77; }
    opts=("${apt_opts[@]}")
}

rm -rf "$cache/root" "$cache/drivers" "$cache/debs"
mkdir -p "$cache/debs/trixie" "$cache/debs/bookworm" "$cache/root" "$cache/drivers"

# The framework: every package an empty system needs for it (what `apt install` would bring).
apt_for trixie trixie
mapfile -t pkgs < <(apt-get "${opts[@]}" install -s --no-install-recommends "${framework[@]}" \
                    | awk '$1 == "Inst" {print $2}')
[ "${#pkgs[@]}" -gt 50 ] || { echo "torchbed fetch: could not resolve ${framework[*]}" >&2; exit 77; }
(cd "$cache/debs/trixie" && apt-get "${opts[@]}" download "${pkgs[@]}" >&2) ||
    { echo "torchbed fetch: download failed" >&2; exit 77; }
for deb in "$cache"/debs/trixie/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done

# The older drivers, each in its own folder, as a container's mounted driver would be.
apt_for bookworm bookworm
(cd "$cache/debs/bookworm" && apt-get "${opts[@]}" download "${old_drivers[@]}" >&2) ||
    { echo "torchbed fetch: download of the old drivers failed" >&2; exit 77; }
for deb in "$cache"/debs/bookworm/*.deb; do
    tmp="$cache/drivers/tmp"; rm -rf "$tmp"; dpkg-deb -x "$deb" "$tmp"
    lib=$(find "$tmp" -name 'libcuda.so.[0-9]*.*' | head -1)
    ver=${lib##*libcuda.so.}; major=${ver%%.*}
    mkdir -p "$cache/root/opt/nvidia-$major"
    cp -a "$(dirname "$lib")"/. "$cache/root/opt/nvidia-$major/"
    ln -sf "libcuda.so.$ver" "$cache/root/opt/nvidia-$major/libcuda.so.1"
    rm -rf "$tmp"
done
rm -rf "$cache/drivers"
rm -rf "$cache/debs"     # unpacked; the .deb files are not needed again

echo "$recipe" > "$stamp"
echo "$cache/root"
