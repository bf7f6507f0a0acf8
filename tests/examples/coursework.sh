#!/bin/sh
# tests/examples/coursework.sh - a student's new score, cell, optimizer and schedule, each one file
# outside the library, plug into the tool: built in with EXTRA=, listed by --help, trained by
# `seqgrad train` (and they learn), their own options (--temperature, --lion-beta2, --gamma) saved
# and read back, and refused where they do not apply.
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

make --no-print-directory -s BUILD="$BUILD" CLI="$SEQ" EXTRA="$DIR/distance_score.cpp $DIR/mgu_cell.cpp $DIR/lion_optimizer.cpp $DIR/step_schedule.cpp $DIR/addition_task.cpp" "$SEQ" >"$W/make.log" 2>&1 ||
  { cat "$W/make.log" >&2; echo "coursework: building the tool with the coursework failed" >&2; exit 1; }

# --help lists them: the score, the cell's two models, the score's own option.
"$SEQ" train --help >"$W/help" 2>&1 || fail "seqgrad train --help failed"
for word in "distance" "mgu, mgu-attn" "--temperature" "lion:" "--lion-beta2" "step:" "--step-size" "--gamma" "addition:" "--digits"; do
  grep -q -- "$word" "$W/help" || fail "seqgrad train --help does not list '$word'"
done

# Trains and learns: the last epoch's validation loss is well below the first's.
lr=0.01
learns() {  # NAME ARGS...: train on reversing 3..6 tokens at rate $lr; the loss must fall by a third
  name=$1; shift
  "$SEQ" train --task reverse --n 1500 --min-len 3 --max-len 6 --hidden 48 --dim 24 --layers 1 --epochs 6 --lr "$lr" \
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
lr=0.002  # (Lion's sign steps want a rate several times below Adam's)
learns lion --arch gru-attn --optimizer lion --lion-beta2 0.98
lr=0.01
learns step --arch gru-attn --schedule step --step-size 100 --gamma 0.5

# The task generates what it says (each target the sum of its source), at most --digits digits.
"$SEQ" data --task addition --n 200 --digits 2 --seed 3 >"$W/add.tsv" 2>&1 || fail "seqgrad data --task addition failed"
awk -F'\t' '{ split($1, ab, "+"); if (ab[1] + ab[2] != $2 || length(ab[1]) > 2 || length(ab[2]) > 2) bad++ }
  END { exit !(NR == 200 && bad == 0) }' "$W/add.tsv" || fail "seqgrad data --task addition: wrong pairs: $(head -3 "$W/add.tsv")"
"$SEQ" train --task addition --digits 2 --n 500 --arch gru-attn --hidden 32 --dim 16 --layers 1 --epochs 1 --threads 1 \
  --out "$W/add.safetensors" >"$W/add.out" 2>&1 || fail "training on the addition task failed: $(tail -1 "$W/add.out")"
"$SEQ" translate --model "$W/add.safetensors" "12+34" >/dev/null 2>&1 || fail "translating with the addition model failed"

# The optimizer's and the schedule's options are kept in the resume file (the run's flags).
"$SEQ" train --task reverse --n 2000 --arch gru --hidden 16 --dim 8 --layers 1 --epochs 3 --batch 32 --threads 1 \
  --optimizer lion --lion-beta2 0.98 --schedule step --gamma 0.5 --minutes 0.001 --out "$W/r.safetensors" >"$W/r.out" 2>&1 ||
  fail "a --minutes run with lion and step failed: $(tail -1 "$W/r.out")"
head -c 8192 "$W/r.resume.safetensors" | grep -q 'lion-beta2\\":\\"0.98' ||
  fail "the resume file does not keep --lion-beta2 0.98"
head -c 8192 "$W/r.resume.safetensors" | grep -q 'gamma\\":\\"0.5' || fail "the resume file does not keep --gamma 0.5"

# The score's option is in the checkpoint's configuration, and the checkpoint translates.
# (The configuration is JSON inside the JSON header, so its quotes are escaped: \".)
head -c 4096 "$W/distance.safetensors" | grep -q 'temperature\\":2' ||
  fail "the distance model's configuration does not hold \"temperature\": 2"
"$SEQ" translate --model "$W/distance.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the distance model failed"
"$SEQ" translate --model "$W/mgu.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the mgu model failed"
# The options are refused where they do not apply (a model without that score, another
# optimizer, another schedule).
refused() {  # FLAG-MESSAGE ARGS...
  message=$1; shift
  "$SEQ" train --task reverse --out "$W/x.safetensors" "$@" >/dev/null 2>"$W/err"
  [ $? -eq 2 ] && grep -q -- "$message" "$W/err" || fail "$* is not refused: $(cat "$W/err")"
}
refused "--temperature does not apply to --arch lstm-attn" --arch lstm-attn --temperature 2
refused "--lion-beta2 does not apply to --optimizer adam" --lion-beta2 0.9
refused "--gamma does not apply to --schedule warmup" --gamma 0.5
refused "--digits does not apply to --task reverse" --digits 2
# The library's own tool knows neither, and says so.
if [ -x "$BUILD/seqgrad" ]; then
  "$BUILD/seqgrad" translate --model "$W/mgu.safetensors" "a b c" >/dev/null 2>"$W/err" &&
    fail "the tool without the coursework loaded an mgu model"
  grep -q "'model' is \"mgu\", which this seqgrad does not have .*make seqgrad EXTRA=its_file.cpp" "$W/err" ||
    fail "loading an mgu model without the cell: $(cat "$W/err")"
  "$BUILD/seqgrad" translate --model "$W/distance.safetensors" "a b c" >/dev/null 2>"$W/err" &&
    fail "the tool without the coursework loaded a model with the distance score"
  grep -q "'attention' is \"distance\", which this seqgrad does not have" "$W/err" ||
    fail "loading a distance-score model without the score: $(cat "$W/err")"
fi

[ "$failures" -eq 0 ] && echo "coursework: a new score, cell, optimizer and schedule, each one file, trained through seqgrad train"
[ "$failures" -eq 0 ]
