#!/bin/sh
# tests/examples/coursework.sh - a student's new score, cells, optimizer, schedule, task, model
# kind and tokenizer, each one file outside the library, plug into the tool: built in with EXTRA=,
# listed by --help, trained by `seqgrad train` (and they learn), their own options (--temperature,
# --indrnn-clip, --lion-beta2, --gamma, --digits, --bow-pool, --frequent-words) saved and read
# back, and refused where they do not apply. The
# same for three positional encodings that work inside attention (ALiBi, T5 buckets, rotary), and
# the library's tests of every registered encoding (tests/nn/test_attention_bias.cpp,
# test_grad_attention_bias.cpp) run once more with the three linked in, in float32 and float64;
# the IndRNN cell's own tests (tests/examples/coursework_indrnn.cpp) are built with it and run.
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

POSITIONAL="$DIR/alibi.cpp $DIR/t5_bias.cpp $DIR/rotary.cpp"
OTHERS="$DIR/distance_score.cpp $DIR/mgu_cell.cpp $DIR/indrnn_cell.cpp $DIR/lion_optimizer.cpp $DIR/step_schedule.cpp \
  $DIR/addition_task.cpp $DIR/bag_of_words.cpp $DIR/frequent_words.cpp"
make --no-print-directory -s BUILD="$BUILD" CLI="$SEQ" EXTRA="$OTHERS $POSITIONAL" "$SEQ" >"$W/make.log" 2>&1 ||
  { cat "$W/make.log" >&2; echo "coursework: building the tool with the coursework failed" >&2; exit 1; }

# The generic tests of positional encodings, with the three encodings linked in: shapes, absolute
# positions, cached == uncached, learning, save/load (float32), gradchecks (float32 and float64).
P_OBJS="" P_OBJS64=""
for f in $POSITIONAL; do
  P_OBJS="$P_OBJS $BUILD/obj/${f%.cpp}.o"
  P_OBJS64="$P_OBJS64 $BUILD/obj64/${f%.cpp}.o"
done
T_OBJS="$BUILD/obj/tests/main.o $BUILD/obj/tests/nn/test_attention_bias.o $BUILD/obj/tests/nn/test_grad_attention_bias.o"
T_OBJS64="$BUILD/obj64/tests/main.o $BUILD/obj64/tests/nn/test_grad_attention_bias.o"
# shellcheck disable=SC2086
make --no-print-directory -s BUILD="$BUILD" $P_OBJS $P_OBJS64 $T_OBJS $T_OBJS64 "$BUILD/libseqgrad.a" "$BUILD/libseqgrad64.a" \
  >"$W/make-tests.log" 2>&1 ||
  { cat "$W/make-tests.log" >&2; echo "coursework: building the positional tests failed" >&2; exit 1; }
whole() { echo "-Wl,--whole-archive $1 -Wl,--no-whole-archive"; }
# shellcheck disable=SC2046,SC2086
${CXX:-g++} $T_OBJS $P_OBJS $(whole "$BUILD/libseqgrad.a") -pthread -o "$W/test_positional" &&
  ${CXX:-g++} $T_OBJS64 $P_OBJS64 $(whole "$BUILD/libseqgrad64.a") -pthread -o "$W/test_positional64" ||
  { echo "coursework: linking the positional tests failed" >&2; exit 1; }
for t in test_positional test_positional64; do
  "$W/$t" >"$W/$t.log" 2>&1 ||
    { cat "$W/$t.log" >&2; fail "$t: the tests of every registered encoding fail with ALiBi, T5 and rotary linked in"; }
done

# --help lists them: the score, the cell's two models, the score's own option.
"$SEQ" train --help >"$W/help" 2>&1 || fail "seqgrad train --help failed"
for word in "distance" "mgu, mgu-attn" "indrnn, indrnn-attn" "--temperature" "--indrnn-clip" "lion:" "--lion-beta2" "step:" "--step-size" "--gamma" \
  "addition:" "--digits" "alibi" "rotary" "t5" "--alibi-max-bias" "--buckets" "--max-distance" "--rotary-base" \
  "bow" "--bow-pool" "frequent:" "--frequent-words"; do
  grep -q -- "$word" "$W/help" || fail "seqgrad train --help does not list '$word'"
done

# Trains and learns: the last epoch's validation loss is well below the first's.
LR=0.01 TASK=reverse
learns() {  # NAME ARGS...: train on reversing 3..6 tokens (or $TASK); the loss must fall by a third
  name=$1; shift
  "$SEQ" train --task "$TASK" --n 1500 --min-len 3 --max-len 6 --dim 24 --layers 1 --epochs 6 --lr "$LR" \
    --batch 32 --threads 1 --out "$W/$name.safetensors" "$@" >"$W/$name.out" 2>&1 ||
    { fail "$name: seqgrad train $* failed: $(tail -1 "$W/$name.out")"; return; }
  first=$(grep -o 'valid_loss=[0-9.]*' "$W/$name.out" | head -1 | cut -d= -f2)
  last=$(grep -o 'valid_loss=[0-9.]*' "$W/$name.out" | tail -1 | cut -d= -f2)
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a * 2 / 3) }' ||
    fail "$name: validation loss went from $first to $last, not down by a third"
  echo "coursework: $name: valid_loss $first -> $last"
}
learns distance --arch lstm-attn --hidden 48 --attention distance --temperature 2
learns mgu --arch mgu --hidden 48
learns mgu-attn --arch mgu-attn --hidden 48
learns indrnn-attn --arch indrnn-attn --hidden 48 --indrnn-clip 2
# The three encodings, each in a small Transformer, at a smaller rate.
LR=0.003
for p in alibi t5 rotary; do
  learns "$p" --arch transformer --positional "$p" --heads 2 --ffn 64 --dropout 0
done
LR=0.002  # (Lion's sign steps want a rate several times below Adam's)
learns lion --arch gru-attn --hidden 48 --optimizer lion --lion-beta2 0.98
LR=0.01
learns step --arch gru-attn --hidden 48 --schedule step --step-size 100 --gamma 0.5
# The bag of words sorts (order does not matter there), and cannot tell a source from its
# shuffle: "a b c d" and "d c b a" translate the same.
TASK=sort
learns bow --arch bow --hidden 48
learns bow-max --arch bow --hidden 48 --bow-pool max
TASK=reverse
head -c 4096 "$W/bow-max.safetensors" | grep -q 'bow_pool\\":\\"max' ||
  fail "the bow model's configuration does not hold \"bow_pool\": \"max\""
bow_says() { "$SEQ" translate --model "$W/bow.safetensors" "$1" 2>/dev/null; }
[ -n "$(bow_says "a b c d")" ] && [ "$(bow_says "a b c d")" = "$(bow_says "d c b a")" ] ||
  fail "the bag of words translates 'a b c d' and 'd c b a' differently"
# The tokenizer: the commonest words whole, the rest spelled; what it learned is in the checkpoint.
"$SEQ" train --task en-fr --n 1500 --src-tokens frequent --tgt-tokens frequent --frequent-words 30 --arch gru-attn \
  --hidden 48 --dim 24 --layers 1 --epochs 6 --lr 0.01 --batch 32 --threads 1 --out "$W/frequent.safetensors" \
  >"$W/frequent.out" 2>&1 || fail "training with --src-tokens frequent failed: $(tail -1 "$W/frequent.out")"
grep -q "frequent: 30 of the [0-9]* distinct source words kept whole" "$W/frequent.out" ||
  fail "the frequent tokenizer did not say what it kept: $(head -3 "$W/frequent.out")"
first=$(grep -o 'valid_loss=[0-9.]*' "$W/frequent.out" | head -1 | cut -d= -f2)
last=$(grep -o 'valid_loss=[0-9.]*' "$W/frequent.out" | tail -1 | cut -d= -f2)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a * 2 / 3) }' ||
  fail "frequent: validation loss went from $first to $last, not down by a third"
echo "coursework: frequent: valid_loss $first -> $last"
head -c 65536 "$W/frequent.safetensors" | grep -q '"seqgrad.src_frequent":' ||
  fail "the checkpoint does not hold what the source's tokenizer learned (seqgrad.src_frequent)"
"$SEQ" translate --model "$W/frequent.safetensors" "tom took a cake yesterday" >"$W/fr.out" 2>&1 ||
  fail "translating with the frequent model failed: $(cat "$W/fr.out")"
grep -q '▁' "$W/fr.out" && fail "the frequent model's translation has word-start markers left: $(cat "$W/fr.out")"
# A damaged list of kept words is refused when the checkpoint loads, naming the entry.
make --no-print-directory -s BUILD="$BUILD" "$BUILD/fault_edit" >"$W/make-fe.log" 2>&1 ||
  { cat "$W/make-fe.log" >&2; fail "building $BUILD/fault_edit failed"; }
damaged() {  # IN PATH VALUE MESSAGE: entry PATH of IN's seqgrad.src_frequent set to VALUE; loading must say MESSAGE
  "$BUILD/fault_edit" "$W/$1.safetensors" "$W/bad.safetensors" set-meta "seqgrad.src_frequent.$2" "$3" >/dev/null 2>&1 ||
    { fail "fault_edit could not set seqgrad.src_frequent.$2"; return; }
  "$SEQ" translate --model "$W/bad.safetensors" "tom" >/dev/null 2>"$W/err"
  [ $? -eq 2 ] && [ "$(cat "$W/err")" = "error: seqgrad: '$W/bad.safetensors': seqgrad.src_frequent: $4" ] ||
    fail "a kept word set to $3 is not refused as expected: $(cat "$W/err")"
}
damaged frequent 0 '"two words"' "frequent: entry 1 is 'two words'; expected a word (not empty, no white space)"
"$BUILD/fault_edit" "$W/frequent.safetensors" "$W/zzz.safetensors" set-meta seqgrad.src_frequent.0 '"zzz"' >/dev/null 2>&1
damaged zzz 1 '"zzz"' "frequent: entry 2 ('zzz') repeats an earlier one"

# The encodings' options are in the checkpoints, and each checkpoint translates (cached decoding
# equal to uncached is tested above, in test_attention_bias.cpp).
"$SEQ" train --task reverse --n 300 --min-len 3 --max-len 6 --dim 24 --layers 1 --epochs 1 --heads 2 --ffn 32 --threads 1 \
  --arch transformer --positional t5 --buckets 8 --max-distance 20 --out "$W/t5opts.safetensors" >/dev/null 2>&1 ||
  fail "training with --buckets 8 --max-distance 20 failed"
head -c 4096 "$W/t5opts.safetensors" | grep -q 'buckets\\":8' || fail "the t5 model's configuration does not hold \"buckets\": 8"
head -c 4096 "$W/t5opts.safetensors" | grep -q 'max_distance\\":20' ||
  fail "the t5 model's configuration does not hold \"max_distance\": 20"
for p in alibi t5 rotary t5opts; do
  "$SEQ" translate --model "$W/$p.safetensors" "a b c d" >/dev/null 2>&1 || fail "translating with the $p model failed"
done
# An encoding's option is refused where it does not apply (a model with another encoding).
"$SEQ" train --task reverse --arch transformer --positional sinusoidal --alibi-max-bias 4 --out "$W/x.safetensors" \
  >/dev/null 2>"$W/err"
[ $? -eq 2 ] && grep -q -- "--alibi-max-bias does not apply to --arch transformer" "$W/err" ||
  fail "--alibi-max-bias with --positional sinusoidal is not refused: $(cat "$W/err")"

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
head -c 4096 "$W/indrnn-attn.safetensors" | grep -q 'indrnn_clip\\":2' ||
  fail "the indrnn model's configuration does not hold \"indrnn_clip\": 2"
"$SEQ" translate --model "$W/indrnn-attn.safetensors" "a b c" >/dev/null 2>&1 || fail "translating with the indrnn model failed"
# Its recurrent weight is a vector: weight_hh_l0 of shape [48] (--hidden 48), no bias_hh at all.
head -c 8192 "$W/indrnn-attn.safetensors" | grep -q '"encoder.rnn.weight_hh_l0":{"dtype":"F32","shape":\[48\]' ||
  fail "the indrnn model's encoder.rnn.weight_hh_l0 is not a vector of 48"
head -c 8192 "$W/indrnn-attn.safetensors" | grep -q 'bias_hh' && fail "the indrnn model holds a bias_hh"

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
refused "--indrnn-clip does not apply to --arch lstm-attn" --arch lstm-attn --indrnn-clip 2
refused "--bow-pool does not apply to --arch lstm-attn" --arch lstm-attn --bow-pool max
refused "--frequent-words is for frequent sides; give --src-tokens frequent or --tgt-tokens frequent too" \
  --frequent-words 30 --src-tokens bpe
# The library's own tool knows none of them, and says so. (Unless it was built with files of
# one's own, make test EXTRA=...: make remembers them in BUILD/seqgrad.extra.)
if [ -s "$BUILD/seqgrad.extra" ] && [ -n "$(tr -d ' \n' <"$BUILD/seqgrad.extra")" ]; then
  echo "coursework: $BUILD/seqgrad has EXTRA files built in; not checking that it refuses the coursework's checkpoints"
elif [ -x "$BUILD/seqgrad" ]; then
  "$BUILD/seqgrad" translate --model "$W/mgu.safetensors" "a b c" >/dev/null 2>"$W/err" &&
    fail "the tool without the coursework loaded an mgu model"
  grep -q "'model' is \"mgu\", which this seqgrad does not have .*make seqgrad EXTRA=its_file.cpp" "$W/err" ||
    fail "loading an mgu model without the cell: $(cat "$W/err")"
  "$BUILD/seqgrad" translate --model "$W/distance.safetensors" "a b c" >/dev/null 2>"$W/err" &&
    fail "the tool without the coursework loaded a model with the distance score"
  grep -q "'attention' is \"distance\", which this seqgrad does not have" "$W/err" ||
    fail "loading a distance-score model without the score: $(cat "$W/err")"
  "$BUILD/seqgrad" translate --model "$W/frequent.safetensors" "a b" >/dev/null 2>"$W/err" &&
    fail "the tool without the coursework loaded a model with the frequent tokenizer"
  grep -q "'src_tokens' is \"frequent\", which this seqgrad does not have" "$W/err" ||
    fail "loading a frequent-tokenizer model without the tokenizer: $(cat "$W/err")"
fi

[ "$failures" -eq 0 ] && echo "coursework: a new score, two cells, an optimizer, a schedule, a task, a model kind," \
  "a tokenizer and three positional encodings, each one file, trained through seqgrad train"
[ "$failures" -eq 0 ]
