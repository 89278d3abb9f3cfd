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
rm -rf "$cache/debs" "$cache/root"
mkdir -p "$work/lists/partial" "$work/archives/partial" "$cache/debs" "$cache/root"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=; [ -f "$keyring" ] && signed="[signed-by=$keyring] "
echo "deb ${signed}$uri $suite main" > "$work/sources.list"
opts=(-o APT::Sandbox::User=root -o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
      -o Dir::State::Lists="$work/lists" -o Dir::Cache::archives="$work/archives"
      -o Dir::State::status=/dev/null -o APT::Architecture="$arch" -o Debug::NoLocking=1 -q)
apt-get "${opts[@]}" update >&2 || { echo "fetch: apt-get update failed" >&2; exit 77; }
(cd "$cache/debs" && apt-get "${opts[@]}" download "${packages[@]}" >&2) || { echo "fetch: download failed" >&2; exit 77; }
for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
rm -rf "$cache/debs"
[ -x "$cache/root/usr/bin/prometheus" ] && [ -x "$cache/root/usr/bin/promtool" ] &&
    [ -x "$cache/root/usr/bin/prometheus-node-exporter" ] || { echo "fetch: the binaries are not in the packages" >&2; exit 77; }
echo "${packages[*]}" > "$stamp"
echo "$cache/root"
