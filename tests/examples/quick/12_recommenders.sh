#!/bin/sh
# tests/examples/quick/12_recommenders.sh - what `12_recommenders --quick` must show (chapter 14,
# "Recommendation"): AFM's attention goes to the three feature pairs that carry the signal, and
# pooling a user's history against the candidate (the general score, and DIN's activation
# unit) predicts clicks better than averaging it.
#
#   sh tests/examples/quick/12_recommenders.sh [BUILD]   (BUILD defaults to build; a few seconds)
#
# One run of the default seed. Over seeds 1-7 and 42 the three signal pairs took 0.47-0.73 of
# AFM's weight (0.3 if it were uniform) and were the three largest in 7 of the 8 seeds (two of
# the three in the other); each candidate-dependent pooling beat the mean by 0.10-0.16 of
# accuracy and 0.049-0.100 of AUC. The margins are below those. Exit 0 when every check holds;
# otherwise each failure is named on stderr.
set -u
cd "$(dirname "$0")/../../.." || exit 2
BUILD=${1:-build}
NAME=quick/12_recommenders
. tests/examples/claims.sh

run quick "$BUILD/examples/12_recommenders" --quick --out "$W"
# A row of one of the two tables: the line that starts with LABEL, the Nth figure after it.
figure() {
  awk -v label="$1" -v n="$2" 'index($0, label) == 1 { print $(split(label, words, " ") + n) }' "$W/quick.out"
}
top3=$(figure "AFM " 2) share=$(figure "AFM " 3)
mean_acc=$(figure "mean pooling " 1) mean_auc=$(figure "mean pooling " 2)
attention_acc=$(figure "attention pooling " 1) attention_auc=$(figure "attention pooling " 2)
unit_acc=$(figure "DIN unit " 1) unit_auc=$(figure "DIN unit " 2)
present "$top3" "$share" "$mean_acc" "$mean_auc" "$attention_acc" "$attention_auc" "$unit_acc" "$unit_auc"

at_least "AFM's weight on the three signal pairs against uniform (0.3)" "$share" 0.3 0.1
at_least "signal pairs among AFM's three largest weights" "$top3" 2 0
at_least "attention pooling beats the mean: accuracy" "$attention_acc" "$mean_acc" 0.05
at_least "attention pooling beats the mean: AUC" "$attention_auc" "$mean_auc" 0.03
at_least "DIN's activation unit beats the mean: accuracy" "$unit_acc" "$mean_acc" 0.05
at_least "DIN's activation unit beats the mean: AUC" "$unit_auc" "$mean_auc" 0.03

finish "AFM's weight on the signal pairs $share ($top3 of the top 3); accuracy mean $mean_acc, attention $attention_acc," \
  "DIN unit $unit_acc"
