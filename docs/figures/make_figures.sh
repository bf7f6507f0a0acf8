#!/bin/sh
# docs/figures/make_figures.sh - draws every figure of the book that the code draws, from the code's
# own objects and from short seeded runs, so that no picture can drift from the program:
#
#   sh docs/figures/make_figures.sh [BUILD]           draw them into docs/figures/ (make figures)
#   sh docs/figures/make_figures.sh --check [BUILD]   draw them into a temporary folder and compare
#                                                     with docs/figures/ (make check-docs runs it)
#
# Three kinds of figure live in docs/figures/:
#   - drawn from the code's objects (build/examples/book_figures: the autograd graph, gemm's
#     blocking, the masks, the positional table, a module tree, attention cost). No training, so
#     the same program draws the same bytes: --check compares them byte for byte.
#   - drawn from short seeded runs: the seqgrad tool's curves, heatmaps, beam tree (a Transformer
#     and an LSTM with attention trained on en-zh for a few seconds), and the examples' --quick
#     figures. Every run is seeded and gives the same bits for any thread count; --check
#     compares them token by token: the same elements, the same words, numbers within a
#     tolerance (a pixel, a hundredth of a log-probability, a few steps of a colour), so that a
#     drawing that changed fails and the last digits of another CPU's arithmetic do not.
#   - concept diagrams, written by hand (concept-*.svg), and explorer.png, the screenshot the
#     browser test takes (tests/examples/explorer_browser.sh): not regenerated here.
# About a minute on 2 cores (the examples run two at a time). Needs `make` first (BUILD defaults to build).
set -u
cd "$(dirname "$0")/../.." || exit 2
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
BUILD=${1:-build}
for p in "$BUILD/seqgrad" "$BUILD/examples/book_figures"; do
  [ -x "$p" ] || { echo "make_figures: $p is not built (run make first)" >&2; exit 2; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/figures.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT INT TERM
if [ "$check" = 1 ]; then OUT=$W/out; else OUT=docs/figures; fi
mkdir -p "$OUT" "$W/runs"
export SEQGRAD_THREADS=${SEQGRAD_THREADS:-2}

quiet() {  # CMD...: run it, its output in $W/last.log; stop with its tail if it fails
  "$@" >"$W/last.log" 2>&1 || { tail -5 "$W/last.log" >&2; echo "make_figures: '$*' failed" >&2; exit 1; }
}

# 1. From the code's objects.
quiet "$BUILD/examples/book_figures" --out "$OUT"

# 2. The seqgrad tool: a Transformer and an LSTM with attention on en-zh, a few seconds each.
S="$BUILD/seqgrad"
"$S" data --task en-zh --n 4000 --seed 1 >"$W/runs/train.tsv" || { echo "make_figures: seqgrad data failed" >&2; exit 1; }
SENTENCE="lily will read three red books tomorrow"
quiet "$S" train --train "$W/runs/train.tsv" --arch transformer --epochs 8 --seed 1 --out "$W/runs/tr.safetensors"
cp "$W/runs/tr.training.svg" "$OUT/training-curves.svg"
quiet "$S" attention --model "$W/runs/tr.safetensors" --svg "$OUT/transformer-heads.svg" --grid $SENTENCE
quiet "$S" attention --model "$W/runs/tr.safetensors" --svg "$OUT/transformer-mean.svg" $SENTENCE
quiet "$S" attention --model "$W/runs/tr.safetensors" --beam 4 --tree "$OUT/beam-tree.svg" $SENTENCE
# The explorer's screenshot: the browser test, on this model (skipped where there is no Chromium).
if [ "$check" = 0 ]; then
  sh tests/examples/explorer_browser.sh "$BUILD" docs/figures/explorer.png "$W/runs/tr.safetensors" "$SENTENCE" ||
    { echo "make_figures: the explorer's browser test failed" >&2; exit 1; }
fi
quiet "$S" train --train "$W/runs/train.tsv" --arch lstm-attn --epochs 6 --seed 1 --out "$W/runs/lstm.safetensors"
quiet "$S" attention --model "$W/runs/lstm.safetensors" --svg "$OUT/lstm-attention.svg" $SENTENCE

# 3. The examples' --quick runs (02_mlp, 10_many_to_one and the NTM in full: seconds as they are). The
#    accuracy tables of 04, 05 and 06 run longer than --quick alone, as the chapters' quick
#    versions do (tests/examples/quick/04_seq2seq.sh, 05_attention.sh, 06_transformer.sh).
# Two lanes of examples side by side, one thread each (the bits do not depend on the thread
# count, and runs this small use two cores better as two runs than as one).
runs=0
example() {  # NAME FLAGS... -- FILE=AS...: run it with --out, then copy each FILE to docs/figures/AS
  name=$1; shift
  flags=""
  while [ "$1" != -- ]; do flags="$flags $1"; shift; done
  shift
  runs=$((runs + 1))
  dir="$W/runs/$name.$runs"
  # shellcheck disable=SC2086
  SEQGRAD_THREADS=1 "$BUILD/examples/$name" $flags --out "$dir" >"$dir.log" 2>&1 ||
    { tail -5 "$dir.log" >&2; echo "make_figures: '$name$flags' failed" >&2; return 1; }
  for pair in "$@"; do cp "$dir/${pair%%=*}" "$OUT/${pair#*=}" || return 1; done
}
(
  runs=100
  example 04_seq2seq --quick --steps 600 --trick all -- seq2seq_accuracy.svg=seq2seq-accuracy.svg &&
  example 11_attention_ocr --quick -- ocr_attention.svg=ocr-attention.svg &&
  example 06_transformer --quick --steps 1000 -- transformer_accuracy.svg=transformer-accuracy.svg &&
  example 02_mlp -- mlp_loss.svg=mlp-loss.svg mlp_regions.svg=mlp-regions.svg &&
  example 12_recommenders --quick -- afm_pairs.svg=afm-pairs.svg din_weights.svg=din-weights.svg &&
  example 09_memory --part memn2n --quick -- memn2n_hops2.svg=memn2n-hops.svg
) &
lane=$!
example 05_attention --quick --steps 600 --models none,dot,general,hard -- attention_accuracy.svg=attention-accuracy.svg attention_heatmap.svg=attention-heatmap.svg &&
  example 14_captioning --quick -- caption_attention_0.svg=caption-attention.svg &&
  example 10_many_to_one -- many_to_one_attention.svg=many-to-one-attention.svg many_to_one_curves.svg=many-to-one-curves.svg &&
  example 09_memory --part ntm -- ntm_copy.svg=ntm-copy.svg
status=$?
wait "$lane" || status=1
[ "$status" = 0 ] || exit 1

if [ "$check" = 0 ]; then
  echo "make_figures: drew $(ls "$OUT"/*.svg | wc -l | tr -d ' ') figures in $OUT (concept diagrams included)"
  exit 0
fi

# --check: each drawn figure against the committed one.
problems=0
exact=" $(grep -o '[a-z0-9-]*\.svg' examples/book_figures/main.cpp | sort -u | tr '\n' ' ') "
for new in "$OUT"/*.svg; do
  name=$(basename "$new")
  old=docs/figures/$name
  if [ ! -f "$old" ]; then
    echo "make_figures: docs/figures/$name is drawn but not committed (run make figures)" >&2
    problems=$((problems + 1))
    continue
  fi
  case "$exact" in
    *" $name "*)
      cmp -s "$new" "$old" || {
        echo "make_figures: docs/figures/$name differs from what the code draws now (run make figures, look at it, commit it)" >&2
        diff "$old" "$new" | head -n 6 | sed 's/^/    /' >&2
        problems=$((problems + 1))
      } ;;
    *)
      sh docs/figures/compare_svg.sh "$old" "$new" >"$W/compare.log" 2>&1 || {
        echo "make_figures: docs/figures/$name differs from what a run draws now (run make figures, look at it, commit it):" >&2
        head -n 4 "$W/compare.log" | sed 's/^/    /' >&2
        problems=$((problems + 1))
      } ;;
  esac
done
[ "$problems" = 0 ] && echo "make_figures: $(ls "$OUT"/*.svg | wc -l | tr -d ' ') drawn figures match docs/figures/"
[ "$problems" = 0 ]
