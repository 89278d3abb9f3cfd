#!/usr/bin/env bash
# Fetch a root with an older glibc than the build's, for the glibc-floor test (t_34): Debian 11's
# libc6 (glibc 2.31, as Ubuntu 20.04 has) with its shell, coreutils, Python (ctypes) and jansson,
# unpacked into a cache that runs as a chroot. Nothing on the system changes (tests/apt_cache.sh).
#
#   tests/oldglibc/fetch.sh [CACHE]     (default: $CUDASHIM_OLDGLIBC or ~/.cache/cudashim-oldglibc)
#
# Prints the root on success; exit 77 with a reason when it cannot fetch.
set -euo pipefail

cache=${1:-${CUDASHIM_OLDGLIBC:-$HOME/.cache/cudashim-oldglibc}}
suite=bullseye
packages=(libc6 dash coreutils python3-minimal libpython3-stdlib libjansson4)
recipe="$suite:${packages[*]} layout:1"
stamp="$cache/.complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
    echo "$cache/root"
    exit 0
fi
for tool in apt-get dpkg-deb awk; do
    command -v $tool >/dev/null || { echo "oldglibc fetch: needs $tool" >&2; exit 77; }
done
. "$(dirname "$0")/../apt_cache.sh"
debian_archive || { echo "oldglibc fetch: no Debian archive in the apt sources" >&2; exit 77; }
private_apt "$cache/apt" "$suite" main || { echo "oldglibc fetch: apt-get update ($suite) failed" >&2; exit 77; }

rm -rf "$cache/root" "$cache/debs"
mkdir -p "$cache/root" "$cache/debs"
mapfile -t pkgs < <(apt-get "${apt_opts[@]}" install -s --no-install-recommends "${packages[@]}" \
                    | awk '$1 == "Inst" {print $2}')
[ "${#pkgs[@]}" -gt 5 ] || { echo "oldglibc fetch: could not resolve ${packages[*]}" >&2; exit 77; }
(cd "$cache/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]}" >&2) ||
    { echo "oldglibc fetch: download failed" >&2; exit 77; }
for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
rm -rf "$cache/debs"
# dash's package makes /bin/sh in its maintainer script, which an unpack does not run.
[ -e "$cache/root/bin/sh" ] || ln -s dash "$cache/root/bin/sh"
[ -e "$cache/root/usr/bin/python3" ] || { echo "oldglibc fetch: no python3 in the root" >&2; exit 77; }

echo "$recipe" > "$stamp"
echo "$cache/root"
