#!/bin/sh
# exercises/verify.sh - every exercise proves itself: its check fails on the untouched stub and
# passes with the reference solution. Run by `make -C exercises verify`, which builds first:
#
#   sh verify.sh OUT NN_name...     OUT/NN_name/check-stub and OUT/NN_name/check-solution
#
# One line per exercise, then a summary; exit 1 if any exercise misbehaves. A stub that passes
# its check, or does not build, or crashes (a signal), or runs longer than VERIFY_TIMEOUT
# seconds (default 60) is a fault of the exercise, as is a solution that does anything but
# pass. A stub may fail by throwing: doctest reports that as a failed test case. Logs go to
# OUT/NN_name/{stub,solution}.log, the build's to OUT/verify-build.log.
# POSIX sh, plus coreutils' timeout.

set -u
out=$1
shift
limit=${VERIFY_TIMEOUT:-60}
start=$(date +%s)
bad=0
total=0

# run BINARY LOG: runs it under the time limit and prints its exit status.
run() {
  timeout -k 5 "$limit" "$1" > "$2" 2>&1
  echo $?
}

# The doctest summary line of a log, shortened: "2 of 3" (failed test cases of all).
cases() {
  sed -n 's/^\[doctest\] test cases: *\([0-9]*\) | *[0-9]* passed | *\([0-9]*\) failed.*/\2 of \1/p' "$1" | tail -n 1
}

# What an exit status other than 0 or 1 means: a time-out, a signal, or an odd exit.
status() {
  case $1 in
    124 | 137) echo "hangs (over ${limit} s)" ;;
    12[5-7]) echo "did not run (status $1)" ;;
    *) if [ "$1" -gt 128 ]; then echo "crashes (signal $(($1 - 128)))"; else echo "exits with status $1"; fi ;;
  esac
}

for ex in "$@"; do
  total=$((total + 1))
  dir=$out/$ex
  problem=""
  if [ ! -x "$dir/check-stub" ]; then
    problem="stub does not build (see $out/verify-build.log)"
  else
    rc=$(run "$dir/check-stub" "$dir/stub.log")
    if [ "$rc" -eq 0 ]; then problem="stub PASSES its check (log: $dir/stub.log)"
    elif [ "$rc" -ne 1 ]; then problem="stub $(status "$rc") (log: $dir/stub.log)"
    fi
  fi
  stub_cases=$( [ -f "$dir/stub.log" ] && cases "$dir/stub.log")
  if [ -z "$problem" ]; then
    if [ ! -f "solutions/$ex/exercise.cpp" ]; then
      problem="no solution (solutions/$ex/exercise.cpp)"
    elif [ ! -x "$dir/check-solution" ]; then
      problem="solution does not build (see $out/verify-build.log)"
    else
      rc=$(run "$dir/check-solution" "$dir/solution.log")
      if [ "$rc" -eq 1 ]; then problem="solution FAILS $(cases "$dir/solution.log") test cases (log: $dir/solution.log)"
      elif [ "$rc" -ne 0 ]; then problem="solution $(status "$rc") (log: $dir/solution.log)"
      fi
    fi
  fi
  if [ -z "$problem" ]; then
    printf 'ok    %-26s stub fails %s test cases, solution passes\n' "$ex" "$stub_cases"
  else
    printf 'BAD   %-26s %s\n' "$ex" "$problem"
    bad=$((bad + 1))
  fi
done

echo "verify: $((total - bad)) of $total exercises prove themselves, $bad misbehave ($(($(date +%s) - start)) s to run)"
[ "$bad" -eq 0 ]
