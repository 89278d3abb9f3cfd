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

# The archive URI and suite from the machine's own sources (deb822 or one-line style).
uri= suite=
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    u=$(awk '/^URIs:/ {print $2; exit}' "$f"); s=$(awk '/^Suites:/ {print $2; exit}' "$f")
    case "$u" in *security*) continue ;; esac
    [ -n "$u" ] && [ -n "$s" ] && { uri=$u; suite=$s; break; }
done
if [ -z "$uri" ]; then
    read -r uri suite < <(awk '$1 == "deb" && $2 !~ /security/ { i = 2; if ($2 ~ /^\[/) i = 3; print $i, $(i+1); exit }' \
                          /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null) || true
fi
[ -n "$uri" ] && [ -n "$suite" ] || { echo "fetch: no Debian archive in the apt sources" >&2; exit 77; }
arch=$(dpkg --print-architecture)

work="$cache/apt"
mkdir -p "$work/lists/partial" "$work/archives/partial" "$cache/debs" "$cache/root"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=; [ -f "$keyring" ] && signed="[signed-by=$keyring] "
{
    echo "deb ${signed}$uri $suite main contrib non-free non-free-firmware"
    echo "deb ${signed}$uri $suite-updates main contrib non-free non-free-firmware"
} > "$work/sources.list"
opts=(-o APT::Sandbox::User=root -o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
      -o Dir::State::Lists="$work/lists" -o Dir::Cache::archives="$work/archives"
      -o Dir::State::status=/dev/null -o APT::Architecture="$arch" -o Debug::NoLocking=1 -q)
apt-get "${opts[@]}" update >&2
cd "$cache/debs"
apt-get "${opts[@]}" download "${packages[@]}" >&2
for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
echo "${packages[*]}" > "$stamp"
echo "$cache/root"
