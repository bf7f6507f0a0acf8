#!/bin/sh
# tests/examples/coursework.sh - a student's new score and new cells, each one file outside the
# library, plug into the tool: built in with EXTRA=, listed by --help, trained by `seqgrad train`
# (and they learn), their own options (--temperature, --indrnn-clip) saved in the checkpoint and
# read back, and refused where they do not apply. The IndRNN cell's own tests
# (tests/examples/coursework_indrnn.cpp) are built with it and run.
#
#   sh tests/examples/coursework.sh [BUILD]        (`make test` runs it; BUILD defaults to build)
#
# The tool with the coursework linked in is BUILD/coursework/seqgrad, so BUILD/seqgrad stays the
# library's own. Exit 0 when every check holds; otherwise each failure is named on stderr.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
DIR=examples/08_extending/coursework
SEQ=$BUILD/coursework/seqgrad
W=$(mktemp -d "${TMPDIR:-/tmp}/coursework.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT INT TERM
failures=0
fail() { echo "coursework: $*" >&2; failures=$((failures + 1)); }

make --no-print-directory -s BUILD="$BUILD" CLI="$SEQ" EXTRA="$DIR/distance_score.cpp $DIR/mgu_cell.cpp $DIR/indrnn_cell.cpp" "$SEQ" >"$W/make.log" 2>&1 ||
  { cat "$W/make.log" >&2; echo "coursework: building the tool with the coursework failed" >&2; exit 1; }

# --help lists them: the score, the cell's two models, the score's own option.
"$SEQ" train --help >"$W/help" 2>&1 || fail "seqgrad train --help failed"
for word in "distance" "mgu, mgu-attn" "indrnn, indrnn-attn" "--temperature" "--indrnn-clip"; do
  grep -q -- "$word" "$W/help" || fail "seqgrad train --help does not list '$word'"
done

# Trains and learns: the last epoch's validation loss is well below the first's.
learns() {  # NAME ARGS...: train on reversing 3..6 tokens; the loss must fall by a third
  name=$1; shift
  "$SEQ" train --task reverse --n 1500 --min-len 3 --max-len 6 --hidden 48 --dim 24 --layers 1 --epochs 6 --lr 0.01 \
    --batch 32 --threads 1 --out "$W/$name.safetensors" "$@" >"$W/$name.out" 2>&1 ||
    { fail "$name: seqgrad train $* failed: $(tail -1 "$W/$name.out")"; return; }
  first=$(grep -o 'valid_loss=[0-9.]*' "$W/$name.out" | head -1 | cut -d= -f2)
  last=$(grep -o 'valid_loss=[0-9.]*' "$W/$name.out" | tail -1 | cut -d= -f2)
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a * 2 / 3) }' ||
    fail "$name: validation loss went from $first to $last, not down by a third"
  echo "coursework: $name: valid_loss $first -> $last"
}
learns distance --arch lstm-attn --attention distance --temperature 2
learns mgu --arch mgu
learns mgu-attn --arch mgu-attn
learns indrnn-attn --arch indrnn-attn --indrnn-clip 2

# The score's option is in the checkpoint's configuration, and the checkpoint translates.
# (The configuration is JSON inside the JSON header, so its quotes are escaped: \".)
head -c 4096 "$W/distance.safetensors" | grep -q 'temperature\\":2' ||
  fail "the distance model's configuration does not hold \"temperature\": 2"
"$SEQ" translate --model "$W/distance.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the distance model failed"
"$SEQ" translate --model "$W/mgu.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the mgu model failed"
head -c 4096 "$W/indrnn-attn.safetensors" | grep -q 'indrnn_clip\\":2' ||
  fail "the indrnn model's configuration does not hold \"indrnn_clip\": 2"
"$SEQ" translate --model "$W/indrnn-attn.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the indrnn model failed"
# Its recurrent weight is a vector: weight_hh_l0 of shape [48] (--hidden 48), no bias_hh at all.
head -c 8192 "$W/indrnn-attn.safetensors" | grep -q '"encoder.rnn.weight_hh_l0":{"dtype":"F32","shape":\[48\]' ||
  fail "the indrnn model's encoder.rnn.weight_hh_l0 is not a vector of 48"
head -c 8192 "$W/indrnn-attn.safetensors" | grep -q 'bias_hh' && fail "the indrnn model holds a bias_hh"
# The option is refused where it does not apply (a model without that score).
"$SEQ" train --task reverse --arch lstm-attn --temperature 2 --out "$W/x.safetensors" >/dev/null 2>"$W/err"
[ $? -eq 2 ] && grep -q -- "--temperature does not apply to --arch lstm-attn" "$W/err" ||
  fail "--temperature with the general score is not refused: $(cat "$W/err")"
"$SEQ" train --task reverse --arch lstm-attn --indrnn-clip 2 --out "$W/x.safetensors" >/dev/null 2>"$W/err"
[ $? -eq 2 ] && grep -q -- "--indrnn-clip does not apply to --arch lstm-attn" "$W/err" ||
  fail "--indrnn-clip with the lstm cell is not refused: $(cat "$W/err")"

# The IndRNN cell's own tests: shapes, its step, a gradient check, no dead entries, its option,
# it learns, save and load (doctest, built against the library the tool was built with).
# (/usr/include is searched already; naming it with -isystem would break <cmath>, as the Makefile says.)
DOCTEST_INCLUDE=${DOCTEST_INCLUDE:-/usr/include}
doctest_flag=""
[ "$DOCTEST_INCLUDE" = /usr/include ] || doctest_flag="-isystem $DOCTEST_INCLUDE"
# shellcheck disable=SC2086
${CXX:-g++} -std=c++17 -O2 -Wall -Wextra -Werror -pthread -I. $doctest_flag tests/examples/coursework_indrnn.cpp \
  tests/main.cpp -Wl,--whole-archive "$BUILD/libseqgrad.a" -Wl,--no-whole-archive -o "$W/indrnn_tests" >"$W/cc.log" 2>&1 ||
  { cat "$W/cc.log" >&2; fail "building tests/examples/coursework_indrnn.cpp failed"; }
if [ -x "$W/indrnn_tests" ]; then
  "$W/indrnn_tests" >"$W/indrnn_tests.log" 2>&1 || { cat "$W/indrnn_tests.log" >&2; fail "the IndRNN cell's tests failed"; }
  echo "coursework: indrnn: $(grep 'test cases:' "$W/indrnn_tests.log")"
fi

# The library's own tool knows none of them, and says so.
if [ -x "$BUILD/seqgrad" ]; then
  "$BUILD/seqgrad" translate --model "$W/mgu.safetensors" "a b c" >/dev/null 2>"$W/err" &&
    fail "the tool without the coursework loaded an mgu model"
  grep -q "'model' must be one of" "$W/err" || fail "loading an mgu model without the cell: $(cat "$W/err")"
fi

[ "$failures" -eq 0 ] && echo "coursework: a new score and new cells, each one file, trained through seqgrad train"
[ "$failures" -eq 0 ]
