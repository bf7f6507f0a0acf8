#!/bin/sh
# tests/examples/coursework.sh - a student's new score and new cell, each one file outside the
# library, plug into the tool: built in with EXTRA=, listed by --help, trained by `seqgrad train`
# (and they learn), their own option (--temperature) saved in the checkpoint and read back.
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

make --no-print-directory -s BUILD="$BUILD" CLI="$SEQ" EXTRA="$DIR/distance_score.cpp $DIR/mgu_cell.cpp" "$SEQ" >"$W/make.log" 2>&1 ||
  { cat "$W/make.log" >&2; echo "coursework: building the tool with the coursework failed" >&2; exit 1; }

# --help lists them: the score, the cell's two models, the score's own option.
"$SEQ" train --help >"$W/help" 2>&1 || fail "seqgrad train --help failed"
for word in "distance" "mgu, mgu-attn" "--temperature"; do
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

# The score's option is in the checkpoint's configuration, and the checkpoint translates.
# (The configuration is JSON inside the JSON header, so its quotes are escaped: \".)
head -c 4096 "$W/distance.safetensors" | grep -q 'temperature\\":2' ||
  fail "the distance model's configuration does not hold \"temperature\": 2"
"$SEQ" translate --model "$W/distance.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the distance model failed"
"$SEQ" translate --model "$W/mgu.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the mgu model failed"
# The option is refused where it does not apply (a model without that score).
"$SEQ" train --task reverse --arch lstm-attn --temperature 2 --out "$W/x.safetensors" >/dev/null 2>"$W/err"
[ $? -eq 2 ] && grep -q -- "--temperature does not apply to --arch lstm-attn" "$W/err" ||
  fail "--temperature with the general score is not refused: $(cat "$W/err")"
# The library's own tool knows neither, and says so.
if [ -x "$BUILD/seqgrad" ]; then
  "$BUILD/seqgrad" translate --model "$W/mgu.safetensors" "a b c" >/dev/null 2>"$W/err" &&
    fail "the tool without the coursework loaded an mgu model"
  grep -q "'model' must be one of" "$W/err" || fail "loading an mgu model without the cell: $(cat "$W/err")"
fi

[ "$failures" -eq 0 ] && echo "coursework: a new score and a new cell, each one file, trained through seqgrad train"
[ "$failures" -eq 0 ]
