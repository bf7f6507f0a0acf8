#!/bin/sh
# bench/bench_decode.sh - decoding throughput of `seqgrad translate`: sentences per second, one
# sentence at a time (--batch 1) against 64 at once (--batch 64), greedy and beam 4.
#
# Trains a small Transformer on the reverse task (2 layers, width 64, about a minute; kept in
# the work folder and reused), translates 10,000 held-out lines ROUNDS times in each setting,
# and prints the median of what translate reports on stderr. The batched and one-at-a-time
# translations must be the same, line for line: the script checks that too.
#   make build/seqgrad && sh bench/bench_decode.sh [ROUNDS, default 3] [THREADS, default 1]
# Work folder: $BENCH_DIR (default build/bench_decode).
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
THREADS=${2:-1}
DIR=${BENCH_DIR:-build/bench_decode}
SEQ=build/seqgrad
[ -x "$SEQ" ] || { echo "bench_decode: build the tool first (make build/seqgrad)" >&2; exit 2; }
mkdir -p "$DIR"
export SEQGRAD_THREADS="$THREADS"

if [ ! -f "$DIR/model.safetensors" ]; then
  "$SEQ" data --task reverse --n 20000 --min-len 2 --max-len 12 --seed 1 > "$DIR/train.tsv"
  "$SEQ" train --train "$DIR/train.tsv" --arch transformer --layers 2 --dim 64 --heads 4 --ffn 256 \
    --dropout 0.1 --batch 64 --epochs 100 --minutes 1 --seed 1 --out "$DIR/model.safetensors" > "$DIR/train.log"
fi
if [ ! -f "$DIR/test.src" ]; then
  "$SEQ" data --task reverse --n 10000 --min-len 2 --max-len 12 --seed 2 --exclude "$DIR/train.tsv" > "$DIR/test.tsv"
  cut -f1 "$DIR/test.tsv" > "$DIR/test.src"
fi

# median of the "(Y sentences/s)" numbers on standard input, one per line
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "# $(wc -l < "$DIR/test.src") lines, $THREADS thread(s), median of $ROUNDS rounds; $(date -u +%Y-%m-%d)"
for beam in 1 4; do
  for batch in 1 64; do
    : > "$DIR/rates"
    round=1
    while [ "$round" -le "$ROUNDS" ]; do
      "$SEQ" translate --model "$DIR/model.safetensors" --beam "$beam" --batch "$batch" \
        < "$DIR/test.src" > "$DIR/out.$beam.$batch" 2> "$DIR/err"
      sed -n 's/.*(\([0-9.]*\) sentences\/s)$/\1/p' "$DIR/err" >> "$DIR/rates"
      round=$((round + 1))
    done
    echo "beam=$beam batch=$batch sentences_per_s=$(median < "$DIR/rates") rounds=$(tr '\n' ' ' < "$DIR/rates")"
  done
  cmp -s "$DIR/out.$beam.1" "$DIR/out.$beam.64" || { echo "bench_decode: beam $beam: batch 1 and 64 translate differently" >&2; exit 1; }
done
echo "# batch 1 and batch 64 gave the same translations"
