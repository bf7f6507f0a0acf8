#!/bin/sh
# tests/examples/quick/06_transformer.sh - what `06_transformer --quick --steps 1000` must show
# beside the quick runs of chapters 6 and 7 (chapter 10's comparison, in minutes instead of three
# seeds of 2,000 steps): the Transformer, with no recurrence at all, reverses sequences of 13-17
# letters that the plain encoder-decoder cannot, and stays below the soft-attention models there.
#
#   sh tests/examples/quick/06_transformer.sh [BUILD]   (BUILD defaults to build; 30-40 s on 2 cores)
#
# Over seeds 1, 2, 3 and 42 the quick runs gave at 13-17 letters (mean, min-max): the
# Transformer 0.34 (0.22-0.46) in 1,000 steps; the plain model 0.00 (0.00-0.02) and attention
# with the dot score 0.89 (0.85-0.91) in 600 (the other two scripts' runs). The margins below
# are under those gaps. Exit 0 when every check holds; otherwise each failure is named on stderr.
set -u
cd "$(dirname "$0")/../../.." || exit 2
BUILD=${1:-build}
NAME=quick/06_transformer
. tests/examples/claims.sh

run transformer "$BUILD/examples/06_transformer" --quick --steps 1000 --out "$W/t"
run plain "$BUILD/examples/04_seq2seq" --quick --steps 600 --trick none --out "$W/p"
run attention "$BUILD/examples/05_attention" --quick --steps 600 --models dot --out "$W/a"
transformer=$(table_cell transformer "13-17" 1) short=$(table_cell transformer "3- 7" 1)
plain=$(table_cell plain "13-17" 1) dot=$(table_cell attention "13-17" 1)
present "$transformer" "$short" "$plain" "$dot"

at_least "the Transformer learns to reverse: exact match at 3-7" "$short" 0.5 0
at_least "no recurrence, and still 13-17 letters: the Transformer against the plain model" "$transformer" "$plain" 0.15
at_least "below soft attention at 13-17: dot against the Transformer" "$dot" "$transformer" 0.2

finish "exact match at 13-17: Transformer $transformer (3-7: $short), plain $plain, dot attention $dot"
