#!/bin/sh
# tests/examples/to_pytorch.sh - the road to PyTorch (chapter 15), tested: seqgrad Transformer
# checkpoints (space, char and bpe sides; sinusoidal and learned positions; post- and pre-norm,
# tied and untied output embeddings) become PyTorch models
# that translate a held-out file exactly as `seqgrad translate` does, compute seqgrad's validation
# loss, go on training (one process, and two with torch.distributed and gloo) with the loss
# falling, and are written back as a checkpoint seqgrad translates with, again as PyTorch does;
# and, through tests/examples/pytorch_script_faults.sh, that both scripts refuse bad input (broken
# checkpoints, corpora, flags, outputs) with one line and status 2, keeping a good file on a
# failed write.
#
#   sh tests/examples/to_pytorch.sh [BUILD]      (`make test` runs it; BUILD defaults to build)
#
# Needs a Python that imports torch: $SEQGRAD_PYTHON if set, else /usr/bin/python3 (Debian's
# python3-torch) or python3. Without one it prints "skipped: PyTorch not installed" and exits 0,
# so machines without PyTorch (CI) pass. Exit 0 when every check holds; otherwise each failure
# is named on stderr and the exit status is 1.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
SEQ=$BUILD/seqgrad

PY=""
for candidate in ${SEQGRAD_PYTHON-/usr/bin/python3 python3}; do
  if "$candidate" -c "import torch" >/dev/null 2>&1; then PY=$candidate; break; fi
done
[ -n "$PY" ] || { echo "skipped: PyTorch not installed"; exit 0; }
[ -x "$SEQ" ] || { echo "to_pytorch: $SEQ is not built (run make)" >&2; exit 2; }
export PYTHONDONTWRITEBYTECODE=1  # train_pytorch.py imports to_pytorch.py: leave no docs/__pycache__ behind

W=$(mktemp -d "${TMPDIR:-/tmp}/to_pytorch.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT INT TERM
started=$(date +%s)
failures=0
fail() { echo "to_pytorch: $*" >&2; failures=$((failures + 1)); }
# The number after "KEY=" or "KEY " on the first line holding it (with a third argument tail, the last).
number() { grep -o "$1[= ][-0-9.e+naif]*" "$2" | ${3:-head} -1 | sed "s/^$1[= ]//"; }
# True when awk finds the expression of a and b true (a NaN or a missing number makes it false).
holds() { awk -v a="$1" -v b="$2" "BEGIN { exit !(a == a + 0 && b == b + 0 && ($3)) }"; }

# ---- checkpoints: a toy task each, trained a few seconds; a held-out file each ----------------
# The held-out file is the validation pairs and lines made to catch a tokenizer that is nearly
# right: longer than --max-decode (cut), unknown words and characters (<unk>), runs of spaces, a
# no-break space (not white space to seqgrad, as it is to Python's str.split), the word-start
# mark ▁ inside the text, one character.
checkpoint() {  # NAME TASK SEQGRAD-TRAIN-FLAGS...
  name=$1 task=$2; shift 2
  "$SEQ" data --task "$task" --n 3000 --seed 1 >"$W/$name.train.tsv" &&
    "$SEQ" data --task "$task" --n 60 --seed 2 --exclude "$W/$name.train.tsv" >"$W/$name.valid.tsv" &&
    "$SEQ" train --train "$W/$name.train.tsv" --valid "$W/$name.valid.tsv" --arch transformer --dim 32 --heads 4 \
      --ffn 64 --layers 2 --epochs 3 --max-decode 24 --threads 1 --seed 1 --out "$W/$name.safetensors" "$@" \
      >"$W/$name.train.out" 2>&1 ||
    { fail "$name: seqgrad train failed: $(tail -2 "$W/$name.train.out")"; return 1; }
  long=$(cut -f1 "$W/$name.valid.tsv" | head -12 | tr '\n' ' ')
  { cat "$W/$name.valid.tsv"
    printf '%s\tx\n' "$long" "zebra ü 日本 qqq" "  they   will  see   a  cat  " "they$(printf '\302\240')will see" \
      "tom▁will▁see▁a▁cat" "7"
  } >"$W/$name.held.tsv"
}

# ---- translations: the same tokens, log-probabilities within 1e-4 ----------------------------
# Besides the held-out file, two sentences a TSV file cannot hold: "" has no tokens, nor " ▁ " on a
# bpe side; seqgrad translate leaves the line of such a sentence empty, and so must PyTorch's.
same_translations() {  # LABEL MODEL HELD-OUT
  if "$PY" docs/to_pytorch.py "$2" "" " ▁ " --data "$3" --seqgrad "$SEQ" --tolerance 1e-4 >"$W/compare.out" 2>&1; then
    echo "to_pytorch: $1: $(tail -1 "$W/compare.out")"
  else
    fail "$1: PyTorch's greedy translations differ from seqgrad's:"; cat "$W/compare.out" >&2
  fi
}

# ---- training on: seqgrad's validation loss at the start, the loss falling ---------------------
train_on() {  # NAME PROCESSES OUT
  log=$W/$1.train$2.out
  "$PY" docs/train_pytorch.py "$W/$1.safetensors" --train "$W/$1.train.tsv" --valid "$W/$1.valid.tsv" --steps 40 \
    --processes "$2" --out "$3" >"$log" 2>&1 || { fail "$1: train_pytorch.py --processes $2 failed:"; cat "$log" >&2; return; }
  seqgrad_valid=$(grep -o 'valid_loss=[0-9.]*' "$W/$1.train.out" | cut -d= -f2 | sort -n | head -1)  # the saved epoch's
  before=$(number "before: valid_loss" "$log") after=$(number "steps: valid_loss" "$log")
  first=$(number ": loss" "$log") last=$(number ": loss" "$log" tail)
  holds "$seqgrad_valid" "$before" "a - b < 2e-4 && b - a < 2e-4" ||
    fail "$1: PyTorch's loss on the validation file is $before, seqgrad's was $seqgrad_valid"
  holds "$first" "$last" "b < a" || fail "$1, $2 process(es): the training loss went from $first to $last, not down"
  holds "$before" "$after" "b < a" || fail "$1, $2 process(es): the validation loss went from $before to $after, not down"
  echo "to_pytorch: $1, $2 process(es): valid_loss $before (seqgrad $seqgrad_valid) -> $after, loss $first -> $last"
}

checkpoint space reverse
checkpoint char date --src-tokens char --tgt-tokens char --positional learned --pre-norm --tie-embeddings
checkpoint bpe en-fr --src-tokens bpe --tgt-tokens bpe --bpe-merges 150
for name in space char bpe; do
  [ -f "$W/$name.safetensors" ] && same_translations "$name" "$W/$name.safetensors" "$W/$name.held.tsv"
done
[ -f "$W/char.safetensors" ] && train_on char 1 "$W/char.one.safetensors"
if [ -f "$W/bpe.safetensors" ]; then
  train_on bpe 2 "$W/bpe.two.safetensors"
  differ=$(number "between them" "$W/bpe.train2.out")
  holds "$differ" 0 "a == b" || fail "the 2 processes' replicas differ by $differ after training; expected 0"
  # Written back, the trained model is seqgrad's again: it translates as PyTorch does.
  [ -f "$W/bpe.two.safetensors" ] && same_translations "bpe, trained on in PyTorch" "$W/bpe.two.safetensors" "$W/bpe.held.tsv"
fi

# ---- refusals: what is not mapped is named, not guessed ----------------------------------------
# The space checkpoint with "activation": "gelu" added to its configuration must not load.
if [ -f "$W/space.safetensors" ]; then
  if "$PY" - "$W/space.safetensors" "$W/gelu.safetensors" >"$W/refuse.out" 2>&1 <<'EOF'
import json, sys
sys.path.insert(0, "docs")
from to_pytorch import Refused, load_checkpoint, read_safetensors, write_safetensors
tensors, metadata = read_safetensors(sys.argv[1])
metadata["seqgrad.config"] = json.dumps(dict(json.loads(metadata["seqgrad.config"]), activation="gelu"))
write_safetensors(sys.argv[2], tensors, metadata)
try:
    load_checkpoint(sys.argv[2])
except Refused as e:  # as the script's main() reports it
    sys.exit(f"to_pytorch: {e}")
EOF
  then
    fail "a checkpoint with an activation key loaded, instead of being refused"
  else
    grep -q "sets 'activation' = \"gelu\", which is not mapped" "$W/refuse.out" &&
      echo "to_pytorch: refused: $(tail -1 "$W/refuse.out")" || fail "refusing activation: $(cat "$W/refuse.out")"
  fi
fi

# ---- bad input: every fault refused with one line and status 2 (pytorch_script_faults.sh) ------
# Its own lines are kept in a file; here only its count, and on a failure its failing cases.
sh tests/examples/pytorch_script_faults.sh "$BUILD" >"$W/faults.out" 2>&1 ||
  { fail "bad input to the scripts is not all refused as it should be:"; grep -v '^ok - ' "$W/faults.out" >&2; }
echo "to_pytorch: $(tail -1 "$W/faults.out")"

echo "to_pytorch: $(($(date +%s) - started)) s"
[ "$failures" -eq 0 ] && echo "to_pytorch: space, char and bpe checkpoints translate, compute their loss and train on in PyTorch"
[ "$failures" -eq 0 ]
