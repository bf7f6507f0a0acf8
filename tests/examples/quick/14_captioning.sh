#!/bin/sh
# tests/examples/quick/14_captioning.sh - what `14_captioning --quick` must show (chapter 14,
# "Image captioning: example 14"): the decoder that attends over the CNN's grid captions the
# scenes far better than the same decoder given the mean of the grid at every step.
#
#   sh tests/examples/quick/14_captioning.sh [BUILD]      (BUILD defaults to build; 30-40 s on 2 cores)
#
# The two models train side by side, one thread each, from the default seed (14). Over seeds 1,
# 2, 3 and 14 the quick runs scored greedy BLEU-4 87.2-94.2 with attention and 59.0-68.0 without
# (24.0 apart at the least, seed by seed), exact match 0.71-0.87 and 0.21-0.34 (0.45 apart). The
# margins are well below those gaps, and above what two decoders without attention differ by
# (9.0 and 0.14). Exit 0 when every check holds; otherwise each failure is named on stderr.
set -u
cd "$(dirname "$0")/../../.." || exit 2
BUILD=${1:-build}
NAME=quick/14_captioning
. tests/examples/claims.sh

with_and_without_attention "$BUILD/examples/14_captioning"

# The greedy row of each run's table: field 2 = BLEU-4, 3 = exact match.
bleu_a=$(greedy attention 2) exact_a=$(greedy attention 3) bleu_m=$(greedy mean 2) exact_m=$(greedy mean 3)
present "$bleu_a" "$exact_a" "$bleu_m" "$exact_m"

at_least "attention captions: its BLEU-4" "$bleu_a" 0 75
at_least "attention captions far better than the mean of the grid: BLEU-4" "$bleu_a" "$bleu_m" 15
at_least "attention captions far better than the mean of the grid: exact match" "$exact_a" "$exact_m" 0.25

finish "greedy BLEU-4 $bleu_a with attention, $bleu_m with the mean of the grid; exact match $exact_a and $exact_m"
