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
. "$(dirname "$0")/../apt_cache.sh"
root=$(fetch_packages "$cache" main "${packages[@]}") || exit 77
[ -x "$root/usr/bin/prometheus" ] && [ -x "$root/usr/bin/promtool" ] && [ -x "$root/usr/bin/prometheus-node-exporter" ] ||
    { echo "fetch: the binaries are not in the packages" >&2; rm -f "$cache/.complete"; exit 77; }
echo "$root"
