#!/usr/bin/env bash
# limit_or_report.sh SECONDS CMD...: runs CMD and, like timeout(1), kills it after SECONDS and
# exits 124; but first reports where it and each of its children wait (hang_report.py), so a
# run that ends at its limit says whether it hung and where, as a hung child does.
limit=$1; shift
report="$(dirname "$0")/hang_report.py"
"$@" &
pid=$!
for ((i = 0; i < limit * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit $?; }
    sleep 0.1
done
echo "run limit of $limit s reached: $*" >&2
for p in "$pid" $(cat /proc/"$pid"/task/*/children 2>/dev/null); do python3 "$report" "$p" >&2; done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
exit 124
