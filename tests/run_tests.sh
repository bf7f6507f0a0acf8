#!/bin/sh
# tests/run_tests.sh "BINARY [ARGS]"... - run doctest binaries and print one closing line
#   tests: N passed, M failed
# counting doctest test cases over all binaries. A binary that dies before printing its
# summary counts as one failed test case. Exits non-zero on any failure.
#
# The binaries run side by side, as many at once as there are arguments (the suites are
# mostly single-threaded, and the machines have two cores), each into its own log; the logs
# are printed in the order given once all have finished, each with the seconds it ran.
# Arguments may hold doctest filters such as -sf=*tests/examples/* to split one binary into
# shards: they are split into words, never expanded as file names.
set -f
passed=0
failed=0
status=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

n=0
for bin in "$@"; do
  n=$((n + 1))
  # unquoted on purpose: "binary -tc=PATTERN" carries its arguments
  ( start=$(date +%s); $bin >"$logs/$n.log" 2>&1; echo $? >"$logs/$n.code"
    echo $(($(date +%s) - start)) >"$logs/$n.seconds" ) &
done
wait

n=0
for bin in "$@"; do
  n=$((n + 1))
  log="$logs/$n.log"
  code=$(cat "$logs/$n.code" 2>/dev/null || echo 1)
  echo "== $bin"
  cat "$log"
  echo "== took $(cat "$logs/$n.seconds" 2>/dev/null || echo '?') s"
  # doctest's summary: "[doctest] test cases: 12 | 12 passed | 0 failed | 0 skipped"
  line=$(grep 'test cases:' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "$bin exited with code $code before printing its summary"
    failed=$((failed + 1))
    status=1
    continue
  fi
  p=$(echo "$line" | sed -n 's/.*| *\([0-9]*\) *passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.*| *\([0-9]*\) *failed.*/\1/p')
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  [ "$code" = 0 ] || status=1
done
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ] || status=1
exit $status
