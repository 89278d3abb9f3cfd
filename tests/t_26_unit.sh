#!/usr/bin/env bash
# Pure parts of the shim tested on their own (tests/unit/): each test links only the files it
# names, so a hidden dependency fails the link. "What would work": a machine and a loaded
# PyTorch build in, the alternatives out, against the reference tables.
. "$(dirname "$0")/lib.sh"
unit() { local name=$1; shift
    $CC -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$TMP/$name" "$ROOT/tests/unit/$name.c" "${@/#/$ROOT/}" \
        || fail "$name: does not build from the files it names"
    "$TMP/$name" || fail "$name"; }
unit alternatives_test shim/alternatives.c shim/reference.c shim/reference_data.c
echo ok
