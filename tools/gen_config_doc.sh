#!/usr/bin/env bash
# Prints the CUDASHIM_* table of docs/configuration.md from shim/process/config_table.h.
cd "$(dirname "$0")/.."
echo "| variable | type | default | meaning |"
echo "|---|---|---|---|"
sed -n 's/^CS_VAR(\([A-Z_]*\), *\([A-Z]*\), *"\([^"]*\)", *"\(.*\)")$/| `CUDASHIM_\1` | \2 | `\3` | \4 |/p' shim/process/config_table.h |
    sed 's/| BOOL |/| 0 or 1 |/; s/| COUNT |/| count |/; s/| STRING |/| text |/; s/| ENUM |/| choice |/; s/| SECONDS |/| seconds |/; s/| BYTES |/| size |/'
