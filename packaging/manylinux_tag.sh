#!/usr/bin/env bash
# The manylinux platform tag for binaries: the newest glibc symbol version they need
# (manylinux_2_17_x86_64 when the newest is GLIBC_2.17), from the undefined symbols of their
# dynamic symbol tables (the versions the preload defines for its own dlopen and dlsym are not
# needs).
#   packaging/manylinux_tag.sh FILE...        prints the tag; --glibc prints "2.34" alone
# OBJDUMP and MACHINE (default objdump and uname -m): another architecture's binaries.
set -eu
only_glibc=0
[ "${1:-}" = --glibc ] && { only_glibc=1; shift; }
v=$("${OBJDUMP:-objdump}" -T "$@" | grep '\*UND\*' | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -u | tail -n 1)
[ -n "$v" ] || { echo "manylinux_tag: no glibc symbol versions in $*" >&2; exit 1; }
if [ $only_glibc = 1 ]; then echo "$v"; exit 0; fi
echo "manylinux_${v%%.*}_${v#*.}_${MACHINE:-$(uname -m)}"
