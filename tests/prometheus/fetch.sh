#!/usr/bin/env bash
# Fetch Debian's Prometheus (prometheus, promtool) and node_exporter into a cache, without touching
# the system's apt configuration or installing anything (a private sources file and lists;
# `apt-get download`, `dpkg-deb -x`). The binaries are static Go programs: they run from there.
#
#   tests/prometheus/fetch.sh [CACHE]     (default: $CUDASHIM_PROMETHEUS or ~/.cache/cudashim-prometheus)
#
# Prints the cache's root (holding usr/bin/prometheus) on success; exit 77 when it cannot fetch.
set -euo pipefail

cache=${1:-${CUDASHIM_PROMETHEUS:-$HOME/.cache/cudashim-prometheus}}
packages=(prometheus prometheus-node-exporter)
stamp="$cache/.complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]}" ]; then
    echo "$cache/root"
    exit 0
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "fetch: needs apt-get and dpkg-deb" >&2; exit 77; }
. "$(dirname "$0")/../apt_cache.sh"
debian_archive || { echo "fetch: no Debian archive in the apt sources" >&2; exit 77; }
rm -rf "$cache/debs" "$cache/root"
mkdir -p "$cache/debs" "$cache/root"
private_apt "$cache/apt" "$APT_SUITE" main || { echo "fetch: apt-get update failed" >&2; exit 77; }
(cd "$cache/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}" >&2) || { echo "fetch: download failed" >&2; exit 77; }
for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
rm -rf "$cache/debs"
[ -x "$cache/root/usr/bin/prometheus" ] && [ -x "$cache/root/usr/bin/promtool" ] &&
    [ -x "$cache/root/usr/bin/prometheus-node-exporter" ] || { echo "fetch: the binaries are not in the packages" >&2; exit 77; }
echo "${packages[*]}" > "$stamp"
echo "$cache/root"
