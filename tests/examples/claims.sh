# tests/examples/claims.sh - what the scripts in tests/examples/quick/ share. Each runs an
# example's --quick command and checks that its output shows what the book claims, with a
# margin that the claim's failure would break. Sourced from the repository root, NAME set:
#
#   NAME=quick/13_gnmt; . tests/examples/claims.sh
#   run quick "$BUILD/examples/13_gnmt" --quick   the command's output to $W/quick.out; stop if it fails
#   with_and_without_attention "$BUILD/examples/11_attention_ocr"
#                                                 its --quick with and without attention, side by
#                                                 side, one thread each: $W/attention.out, $W/mean.out
#   greedy attention 3                            field 3 of that run's "greedy" line
#   table_cell quick "13-17" 2                    the 2nd figure of the row "13-17" of that run's table
#   present "$a" "$b"                             stop, showing the outputs, if a figure is missing
#   at_least "what is claimed" "$a" "$b" 0.4      the claim a >= b + 0.4, or a failure naming it
#   finish "a summary of the figures"             the summary if every claim held; the exit status
#
# $W is a folder of its own, removed on exit. Every failure is one line on stderr that starts
# with NAME.
W=$(mktemp -d "${TMPDIR:-/tmp}/claims.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT INT TERM
failures=0
fail() { echo "$NAME: $*" >&2; failures=$((failures + 1)); }

run() {  # OUT CMD...: run CMD with its output in $W/OUT.out; a command that fails ends the script
  out=$W/$1.out
  shift
  "$@" >"$out" 2>&1 || { tail -3 "$out" >&2; echo "$NAME: '$*' failed" >&2; exit 1; }
}

with_and_without_attention() {  # EXAMPLE: --quick, and --quick --no-attention, at the same time
  export SEQGRAD_THREADS=1
  run attention "$1" --quick --out "$W/attention" &
  attention=$!
  run mean "$1" --quick --no-attention --out "$W/mean" &
  mean=$!
  wait "$attention" || exit 1
  wait "$mean" || exit 1
}

greedy() {  # OUT K: field K of the "greedy" line of $W/OUT.out
  awk -v k="$2" '$1 == "greedy" { print $k }' "$W/$1.out"
}

table_cell() {  # OUT ROW K: the K-th figure after the label ROW ("3- 7", "13-17") in $W/OUT.out's table
  awk -v row="$2" -v k="$3" '{ line = $0; sub(/^ +/, "", line) }
    index(line, row) == 1 { split(substr(line, length(row) + 1), f, " "); print f[k] }' "$W/$1.out"
}

at_least() {  # WHAT A B MARGIN: A >= B + MARGIN
  awk -v a="$2" -v b="$3" -v m="$4" 'BEGIN { exit !(a >= b + m) }' || fail "$1: $2 is not at least $3 + $4"
}

# Each figure a script read, non-empty: a missing one means the output's table changed.
present() {  # FIGURE...
  for v in "$@"; do
    [ -n "$v" ] || { cat "$W"/*.out >&2; echo "$NAME: a figure it checks is missing from the output above" >&2; exit 1; }
  done
}

finish() {  # SUMMARY
  [ "$failures" -eq 0 ] && echo "$NAME: $*"
  [ "$failures" -eq 0 ]
}
