#!/bin/sh
# tests/examples/quick/09_memory.sh - what `09_memory --quick` must show (chapter 7a, "End-to-end
# memory networks"): on where-object stories two hops beat one, the first finding the sentence
# about the object and the second the holder's last move; and without the linear start the
# extra hop buys almost nothing.
#
#   sh tests/examples/quick/09_memory.sh [BUILD]   (BUILD defaults to build; a few seconds)
#
# Two runs of the memory-network part, with the default linear start and with --linear-steps 0.
# Over seeds 1-3 and 42 the two-hop model reached 0.998 with linear start and 0.51-0.55
# without, and one hop 0.47-0.54; the margins below are a fraction of those gaps. Exit 0 when
# every check holds; otherwise each failure is named on stderr.
set -u
cd "$(dirname "$0")/../../.." || exit 2
BUILD=${1:-build}
NAME=quick/09_memory
. tests/examples/claims.sh

run linear "$BUILD/examples/09_memory" --part memn2n --quick --out "$W"
run softmax "$BUILD/examples/09_memory" --part memn2n --quick --out "$W" --linear-steps 0
# One figure of the hops table: RUN HOPS COLUMN (accuracy = 2, hop 1 on fact 1 = 3, hop 2 on
# fact 2 = 4). Only lines after the table's header count.
figure() {
  awk -v h="$2" -v k="$3" '$1 == "hops" && $2 == "accuracy" { table = 1; next } table && $1 == h { print $k }' "$W/$1.out"
}
one=$(figure linear 1 2) two=$(figure linear 2 2) hop1=$(figure linear 2 3) hop2=$(figure linear 2 4)
two_softmax=$(figure softmax 2 2)
present "$one" "$two" "$hop1" "$hop2" "$two_softmax"

at_least "two hops beat one: accuracy with 2 hops against 1" "$two" "$one" 0.3
at_least "hop 1 of the two-hop model reads the sentence about the object (fraction of stories)" "$hop1" 0.9 0
at_least "hop 2 of the two-hop model reads the holder's last move (fraction of stories)" "$hop2" 0.9 0
at_least "linear start matters: 2 hops' accuracy with it against without" "$two" "$two_softmax" 0.3

finish "accuracy 1 hop $one, 2 hops $two (hops on the facts $hop1, $hop2), 2 hops without linear start $two_softmax"
