#!/usr/bin/env bash
# The instructions of a wrapper's success path, counted from the disassembly: from the linked
# entry point (cs_l_NAME) to its first return, the layout both compilers give the fast path
# (failures and the gate closed branch past it). On x86-64 it gives callgrind's added figures
# (38 for cuLaunchKernel, 28 for cuEventRecord); on aarch64, where no emulator counts for us,
# it is the figure.
#   tests/bench/fast-count.sh LIB [OBJDUMP [NM]] [NAME...]
set -eu
lib=$1 objdump=${2:-objdump} nm=${3:-nm}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- cuLaunchKernel cuEventRecord cuCtxGetCurrent
for f in "$@"; do
    addr=$("$nm" "$lib" | awk -v n="cs_l_$f" '$3 == n {print $1}')
    [ -n "$addr" ] || { echo "$f: no cs_l_$f in $lib" >&2; exit 1; }
    n=$("$objdump" -d --no-show-raw-insn "$lib" --start-address=0x"$addr" --stop-address="$(printf '0x%x' $((0x$addr + 2048)))" |
        awk '/^ +[0-9a-f]+:/ {n++; if ($2 ~ /^ret/) {print n; exit}}')
    printf '%-20s %3s instructions to the first return\n' "$f" "$n"
done
