#!/usr/bin/env bash
# tests/faults/run_faults.sh - fault injection for the seqgrad tool: device nodes and FIFOs as
# outputs, a full disk, a closed stdout, file-size and memory limits, signals at random moments,
# broken checkpoints (edited with fault_edit) and broken corpora. Each check prints "ok - what"
# or "FAIL - what (exit code; problems; stderr)"; the last line is "faults: N passed, M failed".
#
#   bash tests/faults/run_faults.sh BUILD_DIR     (BUILD_DIR holds seqgrad and fault_edit)
#
# Everything happens inside one `mktemp -d` folder, removed at the end: device nodes are made
# there with mknod (never the machine's own /dev), the full disk is a 64 KiB tmpfs mounted
# there (root only; skipped otherwise). Every command runs under `timeout`, so a hang is a FAIL.
# Environment: FAULTS_TIMEOUT (60 s: commands that train), FAULTS_QUICK_TIMEOUT (5 s: commands
# that must fail at once, which takes milliseconds; a short limit keeps the suite under 2 minutes
# even when several hang), FAULTS_SEED (the random signal runs; printed at the start).
# What this is not: a test of the numbers a model learns (that is `make test`).
# shellcheck disable=SC2016  # the `bash -c '...'` wrappers expand their own arguments
set -u

if [ $# -ne 1 ] || [ ! -x "$1/seqgrad" ] || [ ! -x "$1/fault_edit" ]; then
  echo "usage: bash tests/faults/run_faults.sh BUILD_DIR   (BUILD_DIR must hold seqgrad and fault_edit)" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
SEQ=$BUILD/seqgrad
EDIT=$BUILD/fault_edit
TIMEOUT=${FAULTS_TIMEOUT:-60}
QUICK=${FAULTS_QUICK_TIMEOUT:-5}
SEED=${FAULTS_SEED:-$$}
RANDOM=$SEED

W=$(mktemp -d "${TMPDIR:-/tmp}/seqgrad-faults.XXXXXX") || exit 2
SMALL_MOUNTED=0
BG_PID=""  # a training run in the background, while the script waits to signal it
cleanup() {
  if [ -n "$BG_PID" ]; then kill -TERM "$BG_PID" 2>/dev/null; wait "$BG_PID"; fi
  cd /
  [ "$SMALL_MOUNTED" = 1 ] && umount "$W/small"
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$W" || exit 2
mkdir -p log ref nodes e r corpus
OUT=$W/log/out
ERR=$W/log/err
EMPTY=$W/log/empty  # stdin of every command (not the machine's /dev/null)
: > "$EMPTY"
echo "# seqgrad fault injection in $W (FAULTS_SEED=$SEED)"

# A tiny model trains in well under a second.
TINY=(--arch lstm --layers 1 --hidden 16 --dim 16 --batch 32 --threads 1)
# Runs long enough (a few seconds) for a signal to land in the middle of training.
LONG=(--task copy --n 20000 --epochs 4 "${TINY[@]}")

# Wrappers that keep `timeout` in front: CMD with stdout sent to FILE, with stdout closed, and
# with a resource limit (ulimit OPTION VALUE). Each execs, so a signal death shows as 128+n.
STDOUT_TO=(bash -c 'f=$1; shift; exec "$@" > "$f"' _)
STDOUT_CLOSED=(bash -c 'exec "$@" >&-' _)
STDIN_FROM=(bash -c 'f=$1; shift; exec "$@" < "$f"' _)
ULIMIT=(bash -c 'ulimit "$1" "$2" || exit 99; shift 2; exec "$@"' _)

# ================================================================================================
# The checking machinery

passed=0
failed=0
RC=0
LIMIT=0
PROBLEMS=()
GUARDED=()  # good files that no command may change; restored after each check

guard() { GUARDED+=("$1"); cp "$1" "$W/ref/$(ref_name "$1")"; }
unguard() {
  local kept=() f
  for f in "${GUARDED[@]}"; do [ "$f" != "$1" ] && kept+=("$f"); done
  GUARDED=("${kept[@]}")
}
ref_name() { local r=${1#"$W"/}; echo "${r//\//_}"; }

# run SECONDS CMD...: CMD under timeout, stdout and stderr to $OUT and $ERR. Sets RC and clears
# PROBLEMS. The shell's own "Segmentation fault" notices go to log/shell, not to the report.
run() {
  LIMIT=$1
  shift
  PROBLEMS=()
  { timeout -k 5 "$LIMIT" "$@" > "$OUT" 2> "$ERR" < "$EMPTY"; RC=$?; } 2>> "$W/log/shell"
}

# How a command ended, in words: "exit 2", "killed by SIGSEGV", "hung (timeout after 10 s)".
ending() {
  case $RC in
    124|137) echo "hung (timeout after $LIMIT s)" ;;
    *) if ((RC > 128)); then echo "killed by SIG$(kill -l $((RC - 128)) 2>/dev/null || echo $((RC - 128))) (exit $RC)"; else echo "exit $RC"; fi ;;
  esac
}

# The generic contract of a failing command: exit 1 or 2, stderr's first line "error: ...", no
# crash, no bare std::bad_alloc.
want_error() {
  case $RC in
    1|2) ;;
    0) PROBLEMS+=("succeeded, expected an error") ;;
    *) PROBLEMS+=("expected exit 1 or 2") ;;
  esac
  if [ ! -s "$ERR" ]; then
    PROBLEMS+=("stderr empty")
  elif [[ $(head -n 1 "$ERR") != error:* ]]; then
    PROBLEMS+=("stderr does not start with 'error:'")
  fi
  grep -qE 'terminate called|Segmentation|Aborted|core dumped' "$ERR" && PROBLEMS+=("crash message on stderr")
  grep -qxE '(error: )?(std::)?bad_alloc' "$ERR" && PROBLEMS+=("bare std::bad_alloc")
}

want_ok() { [ "$RC" = 0 ] || PROBLEMS+=("expected exit 0"); }

# After every command: no temporary file anywhere in the folder (removed once reported, so one
# fault is not reported again by the next check), and every guarded file unchanged (restored).
after_checks() {
  local f
  while IFS= read -r f; do
    PROBLEMS+=("left ${f#"$W"/}")
    rm -rf "$f"
  done < <(find "$W" -name '*.tmp*' ! -path "$W/log/*" 2>/dev/null)
  for f in "${GUARDED[@]}"; do
    if ! cmp -s "$f" "$W/ref/$(ref_name "$f")"; then
      PROBLEMS+=("changed ${f#"$W"/}")
      cp "$W/ref/$(ref_name "$f")" "$f"
    fi
  done
}

report() {
  if ((${#PROBLEMS[@]} == 0)); then
    echo "ok - $1"
    passed=$((passed + 1))
  else
    local why first
    why=$(printf '%s; ' "${PROBLEMS[@]}")
    first=$(head -n 1 "$ERR" | cut -c1-160)
    echo "FAIL - $1 ($(ending); ${why}stderr: ${first:-(empty)})"
    failed=$((failed + 1))
  fi
}

# expect_error NAME [-t SECONDS] -- CMD...   (default timeout: FAULTS_TIMEOUT), and expect_ok.
expect() {
  local want=$1 name=$2 limit=$TIMEOUT
  shift 2
  if [ "$1" = -t ]; then limit=$2; shift 2; fi
  [ "$1" = -- ] && shift
  run "$limit" "$@"
  "want_$want"
  after_checks
  report "$name"
}
expect_error() { expect error "$@"; }
expect_ok() { expect ok "$@"; }

# A checkpoint is loadable when translate runs on it.
loadable() { timeout -k 5 "$QUICK" "$SEQ" translate --model "$1" "a b c" > "$W/log/load.out" 2>&1 < "$EMPTY"; }

# Fresh nodes in nodes/: full and null character devices, a FIFO, a directory.
HAVE_NODES=1
reset_nodes() {
  rm -rf "$W/nodes" && mkdir "$W/nodes" && mkfifo "$W/nodes/fifo" && mkdir "$W/nodes/somedir"
  [ "$HAVE_NODES" = 1 ] && mknod "$W/nodes/full" c 1 7 && mknod "$W/nodes/null" c 1 3
}
if ! reset_nodes 2>"$W/log/mknod"; then
  HAVE_NODES=0
  echo "skip: cannot mknod character devices ($(head -n 1 "$W/log/mknod")); checks writing to them are skipped"
fi
# node_kind_is TEST PATH: the node is still what it was (test -c, -p or -d)
node_kind_is() { test "$1" "$2" || PROBLEMS+=("${2#"$W"/} is no longer what it was: $(stat -c %F "$2" 2>/dev/null || echo gone)"); }

# The value of FIELD in the training state of a resume file, as written.
state_value() { "$EDIT" "$1" list | sed -n 's/^meta seqgrad.train_state = //p' | grep -o "\"$2\":[^,}]*" | cut -d: -f2; }

# edit OUT IN OPERATION ARGS...: fault_edit IN into OUT; says FAIL (and returns 1) if it cannot.
edit() {
  local out=$1
  shift
  rm -f "$out"
  "$EDIT" "$1" "$out" "${@:2}" 2> "$W/log/edit" && return 0
  echo "FAIL - fault_edit ${*:2} ($(head -n 1 "$W/log/edit"))"
  failed=$((failed + 1))
  return 1
}

# train_with_signal DIR SIGNAL WHEN: a LONG training run with --out DIR/m.safetensors, sent
# SIGNAL after WHEN seconds, or 0.1 s after it printed "epoch 1: ..." (WHEN = after-epoch-1).
# The signal goes to timeout --foreground, which forwards it once to the tool (without
# --foreground it would also signal the process group, and a second SIGINT ends a run at once).
train_with_signal() {
  rm -rf "$1" && mkdir -p "$1"
  : > "$OUT"  # (before the job starts: the poll below must not see the last command's output)
  PROBLEMS=()
  LIMIT=$TIMEOUT
  { timeout --foreground -k 5 "$TIMEOUT" "$SEQ" train "${LONG[@]}" --out "$1/m.safetensors" > "$OUT" 2> "$ERR" < "$EMPTY" &
    BG_PID=$!
    if [ "$3" = after-epoch-1 ]; then
      local polls=0
      until grep -q '^epoch 1:' "$OUT" || ! kill -0 "$BG_PID" 2>/dev/null || ((++polls > 20 * TIMEOUT)); do sleep 0.05; done
      sleep 0.1
    else
      sleep "$3"
    fi
    kill "-$2" "$BG_PID" 2>/dev/null
    wait "$BG_PID"
    RC=$?
    BG_PID=""; } 2>> "$W/log/shell"
}

# ================================================================================================
# Fixtures: a tiny LSTM (m), a tiny Transformer (t), a test set, and an interrupted run (r/)

expect_ok "setup: train a tiny LSTM" -- "$SEQ" train --task copy --n 200 --epochs 2 "${TINY[@]}" --out "$W/m.safetensors"
expect_ok "setup: train a tiny Transformer" -- "$SEQ" train --task copy --n 200 --epochs 2 --arch transformer \
  --layers 1 --dim 16 --heads 2 --ffn 32 --batch 32 --threads 1 --out "$W/t.safetensors"
"$SEQ" data --task copy --n 20 --seed 7 > "$W/test.tsv" 2>> "$W/log/shell"
[ -f m.safetensors ] && guard "$W/m.safetensors"
[ -f t.safetensors ] && guard "$W/t.safetensors"

# r/m.resume.safetensors: a run stopped by SIGINT in its second epoch.
R=$W/r/m.resume.safetensors
train_with_signal "$W/r" INT after-epoch-1
R_EPOCH=$([ -f "$R" ] && state_value "$R" epoch)
[ "$RC" = 130 ] || PROBLEMS+=("expected exit 130")
[ "${R_EPOCH:-0}" -ge 2 ] 2>/dev/null || PROBLEMS+=("no r/m.resume.safetensors stopped in epoch 2 or later")
after_checks
report "setup: SIGINT during training saves r/m.resume.safetensors (epoch ${R_EPOCH:-?}) and exits 130"
HAVE_RESUME=0
if [ "${R_EPOCH:-0}" -ge 2 ] 2>/dev/null; then
  HAVE_RESUME=1
  guard "$W/r/m.safetensors"
  guard "$R"
fi

# ================================================================================================
# 1. Outputs that are not regular files are never replaced

# The nodes a section can use: a FIFO and a directory always, the character devices as root.
NODES=(fifo:-p somedir:-d)
[ "$HAVE_NODES" = 1 ] && NODES=(full:-c null:-c "${NODES[@]}")
[ "$HAVE_NODES" = 1 ] || echo "skip: section 1 without character devices (FIFO and directory cases only)"

for node in "${NODES[@]}"; do
  name=${node%:*} kind=${node#*:}
  [ "$name" = null ] || [ "$name" = somedir ] && continue
  reset_nodes
  run "$QUICK" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$W/nodes/$name"
  want_error; node_kind_is "$kind" "$W/nodes/$name"; after_checks
  report "1. train --out a $name node fails and leaves it alone"
done
for node in "${NODES[@]}"; do
  name=${node%:*} kind=${node#*:}
  reset_nodes
  run "$QUICK" "$SEQ" attention --model "$W/t.safetensors" --svg "$W/nodes/$name" "a b c"
  if [ "$name" != null ] || [ "$RC" != 0 ]; then want_error; fi  # the null device may take it
  node_kind_is "$kind" "$W/nodes/$name"; after_checks
  report "1. attention --svg nodes/$name leaves the node alone"
done
for node in "${NODES[@]}"; do
  name=${node%:*} kind=${node#*:}
  [ "$name" = fifo ] || [ "$name" = full ] || continue
  reset_nodes
  if [ "$name" = fifo ]; then mkfifo "$W/nodes/x.training.svg"; else mknod "$W/nodes/x.training.svg" c 1 7; fi
  run "$QUICK" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$W/nodes/x.safetensors"
  want_error; node_kind_is "$kind" "$W/nodes/x.training.svg"; after_checks
  report "1. train whose x.training.svg is a $name node fails and leaves it alone"
done

# ================================================================================================
# 2. Resume files with impossible training states, a broken optimizer state, contradicting flags

# resume_check NAME EDITED ORIGINAL NEW: `train --resume EDITED` must fail (exit 0 is fine only
# when the edit wrote back the value that was there).
resume_check() {
  run "$QUICK" "$SEQ" train --resume "$2"
  if [ "$RC" = 0 ] && [[ $4 =~ ^-?[0-9]+(e[0-9]+)?$ ]] && awk -v a="$3" -v b="$4" 'BEGIN { exit !(a + 0 == b + 0) }'; then
    :  # the original value: accepting it is right
  else
    want_error
    [ -n "$3" ] && ((${#PROBLEMS[@]})) && PROBLEMS+=("the file had $3")
  fi
  after_checks
  report "$1"
}

E=$W/e/edited.safetensors
if [ "$HAVE_RESUME" = 1 ]; then
  for field in epoch step warmup_steps epoch_loss best_valid; do
    original=$(state_value "$R" "$field")
    values=(-1 0 1e18 1e400 NaN)
    # The sum of the epoch's losses so far has no upper limit a run could not reach, and can be
    # 0 (a sure, right model): a large or zero one is a legal (if unlikely) state mid-epoch.
    [ "$field" = epoch_loss ] && values=(-1 1e400 NaN)
    for value in "${values[@]}"; do
      edit "$E" "$R" set-meta "seqgrad.train_state.$field" "$value" &&
        resume_check "2. train --resume with train_state.$field = $value fails" "$E" "$original" "$value"
    done
  done
  edit "$E" "$R" drop-tensor optimizer.step &&
    resume_check "2. train --resume without the tensor optimizer.step fails" "$E" "" ""
  original=$("$EDIT" "$R" list | sed -n 's/^tensor optimizer.step \[\] = //p')
  for value in -1 1e18 nan; do
    edit "$E" "$R" set-tensor-value optimizer.step "$value" &&
      resume_check "2. train --resume with optimizer.step = $value fails" "$E" "$original" "$value"
  done
  edit "$E" "$R" set-meta seqgrad.train_state.flags.layers '"5"' &&
    resume_check "2. train --resume with flags.layers \"5\" against a 1-layer config fails" "$E" "" ""
  # Every model tensor must be in a resume file, with its shape: only the optimizer's buffers are
  # the file's own extra (one missing weight used to translate, evaluate and resume with that
  # weight left random, exit 0; a config naming another model kind used none of the tensors).
  if edit "$E" "$R" drop-tensor decoder.out.weight; then
    for cmd in translate eval resume; do
      case $cmd in
        translate) run "$QUICK" "$SEQ" translate --model "$E" "a b c" ;;
        eval) run "$QUICK" "$SEQ" eval --model "$E" --data "$W/test.tsv" ;;
        resume) run "$QUICK" "$SEQ" train --resume "$E" ;;
      esac
      want_error
      grep -q "missing: decoder.out.weight" "$ERR" || PROBLEMS+=("the error does not name decoder.out.weight")
      after_checks
      report "2. $cmd of a resume file without decoder.out.weight fails, naming it"
    done
  fi
  if edit "$E" "$R" set-meta seqgrad.config.model '"transformer"'; then
    run "$QUICK" "$SEQ" translate --model "$E" "a b c"
    want_error
    # (Refused either way: for the options the other kind takes, or for its tensors.)
    grep -qE "does not match the model|the model configuration has no" "$ERR" ||
      PROBLEMS+=("the error says neither that the tensors nor that the configuration do not match")
    after_checks
    report "2. translate of a resume file whose config names another model kind fails"
  fi
  rm -f "$E"
else
  echo "skip: section 2 needs the interrupted run"
fi

# ================================================================================================
# 3. Checkpoint configurations no model can have: translate and eval fail at once, also in 400 MB
# of address space. (The first run has a 4 GB limit too: a tool that tries to build 10^7 layers
# must not take the machine's memory down with it.) 1e18 and 1e9 are not integers in JSON; the
# same values written as integers check the ranges, not only the types.

for change in t:layers:10000000 m:layers:10000000 t:dim:1e18 t:dim:1000000000000000000 m:hidden:-1 t:heads:0 \
              t:max_len:1e9 t:max_len:1000000000 m:max_len:1000000000 t:src_tokens:'"bogus"' t:model:'"bogus"'; do
  IFS=: read -r which field value <<< "$change"
  [ -f "$W/$which.safetensors" ] || continue
  edit "$W/e/config.safetensors" "$W/$which.safetensors" set-meta "seqgrad.config.$field" "$value" || continue
  for vmem in 4000000 400000; do
    expect_error "3. translate with a $which checkpoint whose $field = $value fails (ulimit -v $vmem)" -t "$QUICK" -- \
      "${ULIMIT[@]}" -v "$vmem" "$SEQ" translate --model "$W/e/config.safetensors" "a b c"
    expect_error "3. eval with a $which checkpoint whose $field = $value fails (ulimit -v $vmem)" -t "$QUICK" -- \
      "${ULIMIT[@]}" -v "$vmem" "$SEQ" eval --model "$W/e/config.safetensors" --data "$W/test.tsv"
  done
done
rm -f "$W/e/config.safetensors"

# Weights that are not finite numbers: refused when the model loads, naming the tensor (a NaN
# used to translate to empty lines scored -inf, and eval reported bleu=0 and exit 0).
for value in nan inf -inf; do
  [ -f "$W/m.safetensors" ] || break
  edit "$W/e/weights.safetensors" "$W/m.safetensors" set-tensor-value decoder.rnn.weight_hh_l0 "$value" || continue
  for cmd in translate eval; do
    if [ "$cmd" = translate ]; then
      run "$QUICK" "$SEQ" translate --model "$W/e/weights.safetensors" --scores "a b c"
    else
      run "$QUICK" "$SEQ" eval --model "$W/e/weights.safetensors" --data "$W/test.tsv"
    fi
    want_error
    grep -q "tensor 'decoder.rnn.weight_hh_l0': expected finite values" "$ERR" || PROBLEMS+=("the error does not name the tensor")
    after_checks
    report "3. $cmd with every decoder.rnn.weight_hh_l0 = $value fails, naming the tensor"
  done
done
rm -f "$W/e/weights.safetensors"

# A model that emits special tokens (here every logit equal, so argmax is <pad>, id 0): attention
# draws their rows under their names (it failed with "Heatmap: expected 64 row labels ... got 1").
if [ -f "$W/t.safetensors" ] && edit "$W/e/flat.safetensors" "$W/t.safetensors" set-tensor-value generator.weight 0 &&
   edit "$W/e/pads.safetensors" "$W/e/flat.safetensors" set-tensor-value generator.bias 1; then
  run "$QUICK" "$SEQ" attention --model "$W/e/pads.safetensors" --svg "$W/e/pads.svg" a b c
  want_ok
  grep -q "&lt;pad&gt;" "$W/e/pads.svg" 2>/dev/null || PROBLEMS+=("the heatmap names no <pad> row")
  after_checks
  report "3. attention of a model that emits <pad> draws and names a row for each step"
fi
rm -f "$W/e/flat.safetensors" "$W/e/pads.safetensors" "$W/e/pads.svg"

# ================================================================================================
# 4. A file-size limit while train overwrites a good checkpoint: an error, not SIGXFSZ; the good
# checkpoint untouched

cp "$W/m.safetensors" "$W/good.safetensors" && guard "$W/good.safetensors"
expect_error "4. train --out good.safetensors under ulimit -f 16 fails and keeps the old file" -- \
  "${ULIMIT[@]}" -f 16 "$SEQ" train --task copy --n 200 --epochs 2 "${TINY[@]}" --out "$W/good.safetensors"

# ================================================================================================
# 5. SIGTERM and SIGHUP stop training like Ctrl-C does; signals at random moments leave only
# loadable checkpoints and no temporary files

for sig in TERM:143 HUP:129; do
  name=${sig%:*} code=${sig#*:} d=$W/sig_$name
  train_with_signal "$d" "$name" after-epoch-1
  [ "$RC" = "$code" ] || PROBLEMS+=("expected exit $code")
  grep -qi resume "$OUT" "$ERR" || PROBLEMS+=("no message about the resume file")
  if [ -f "$d/m.resume.safetensors" ]; then
    after_checks
    if ! timeout -k 5 "$TIMEOUT" "$SEQ" train --resume "$d/m.resume.safetensors" > "$W/log/resume.out" 2>&1 < "$EMPTY"; then
      PROBLEMS+=("train --resume failed: $(tail -n 1 "$W/log/resume.out")")
    fi
  else
    PROBLEMS+=("no $(basename "$d")/m.resume.safetensors")
  fi
  after_checks
  report "5. SIG$name during training: exit $code, a message, a resume file that resumes to exit 0"
done

for i in 1 2 3 4 5 6 7 8; do
  sigs=(INT TERM HUP)
  name=${sigs[RANDOM % 3]}
  ms=$((50 + RANDOM % 1451))
  delay=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
  d=$W/random_$i
  train_with_signal "$d" "$name" "$delay"
  code=$((128 + $(kill -l "$name")))
  [ "$RC" = 0 ] || [ "$RC" = "$code" ] || PROBLEMS+=("expected exit 0 or $code")
  # Stopped during training (not before it began): the resume file is there and loads.
  if grep -q "interrupted by" "$OUT" && ! { [ -f "$d/m.resume.safetensors" ] && loadable "$d/m.resume.safetensors"; }; then
    PROBLEMS+=("said it saved m.resume.safetensors, which is missing or does not load")
  fi
  if [ -f "$d/m.safetensors" ] && ! loadable "$d/m.safetensors"; then
    PROBLEMS+=("m.safetensors does not load: $(tail -n 1 "$W/log/load.out")")
  fi
  after_checks
  report "5. random signal $i/8 (SIG$name after $delay s): exit 0 or $code, no temporary files, the checkpoint loads"
  rm -rf "$d"
done

# Ctrl-C on `seqgrad train ... | tee log` ends tee too: the progress lines then go to a pipe no
# one reads, and the run must still save its resume file (here the reader stops after a line).
d=$W/pipe && rm -rf "$d" && mkdir -p "$d" && mkfifo "$d/pipe"
PROBLEMS=()
{ head -n 1 < "$d/pipe" > /dev/null &
  timeout --foreground -k 5 "$TIMEOUT" "$SEQ" train "${LONG[@]}" --out "$d/m.safetensors" --loss-log "$d/loss" \
    > "$d/pipe" 2> "$ERR" < "$EMPTY" &
  BG_PID=$!
  polls=0  # until it has trained a few steps, with the reader long gone
  until [ "$(wc -l < "$d/loss" 2>/dev/null || echo 0)" -ge 20 ] || ! kill -0 "$BG_PID" 2>/dev/null || ((++polls > 2000)); do
    sleep 0.01
  done
  kill -INT "$BG_PID" 2>/dev/null
  wait "$BG_PID"
  RC=$?
  BG_PID=""; } 2>> "$W/log/shell"
[ "$RC" = 130 ] || PROBLEMS+=("expected exit 130")
{ [ -f "$d/m.resume.safetensors" ] && loadable "$d/m.resume.safetensors"; } || PROBLEMS+=("no loadable m.resume.safetensors")
after_checks
report "5. Ctrl-C with the reader of stdout gone (| tee): exit 130 and a resume file"
rm -rf "$d"

# ================================================================================================
# 6. Standard output that cannot be written

if [ "$HAVE_NODES" = 1 ]; then
  reset_nodes
  expect_error "6. data > full device fails" -- "${STDOUT_TO[@]}" "$W/nodes/full" "$SEQ" data --task copy --n 5000
  expect_error "6. translate > full device fails" -- "${STDOUT_TO[@]}" "$W/nodes/full" "$SEQ" translate --model "$W/m.safetensors" "a b c"
  expect_error "6. eval > full device fails" -- "${STDOUT_TO[@]}" "$W/nodes/full" "$SEQ" eval --model "$W/m.safetensors" --data "$W/test.tsv"
  expect_error "6. data --help > full device fails" -- "${STDOUT_TO[@]}" "$W/nodes/full" "$SEQ" data --help
  run "$TIMEOUT" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$W/e/log.safetensors" --loss-log "$W/nodes/full"
  want_error; node_kind_is -c "$W/nodes/full"; after_checks
  report "6. train --loss-log full device fails"
else
  echo "skip: the full-device checks of section 6 need character devices"
fi
mkdir -p "$W/small"
if mount -t tmpfs -o size=64k tmpfs "$W/small" 2> "$W/log/mount"; then
  SMALL_MOUNTED=1
  expect_error "6. data > a file on a 64 KiB filesystem that fills up fails" -- \
    "${STDOUT_TO[@]}" "$W/small/train.tsv" "$SEQ" data --task copy --n 5000
  yes 0123456789 | head -c 100000 > "$W/small/filler" 2>> "$W/log/shell"  # now it is full
  expect_error "6. data > a file on a full filesystem fails" -- \
    "${STDOUT_TO[@]}" "$W/small/train2.tsv" "$SEQ" data --task copy --n 10
  umount "$W/small" && SMALL_MOUNTED=0
else
  echo "skip: cannot mount a small tmpfs ($(head -n 1 "$W/log/mount"))"
fi
# A checkpoint that no longer fits after an epoch (every check before the run passed): the run
# is kept as a resume file in $TMPDIR, named in the error, and it resumes to another --out.
if mount -t tmpfs -o size=12k tmpfs "$W/small" 2> "$W/log/mount"; then
  SMALL_MOUNTED=1
  mkdir -p "$W/elsewhere"
  run "$QUICK" env TMPDIR="$W/elsewhere" "$SEQ" train --task copy --n 200 --epochs 2 "${TINY[@]}" --out "$W/small/m.safetensors"
  want_error
  KEPT=$(find "$W/elsewhere" -name 'm.*.resume.safetensors' | head -n 1)
  if [ -z "$KEPT" ]; then
    PROBLEMS+=("no resume file in TMPDIR")
  else
    grep -qF "is saved in '$KEPT'" "$ERR" || PROBLEMS+=("the error does not name $KEPT")
    loadable "$KEPT" || PROBLEMS+=("the kept run does not load")
  fi
  after_checks
  report "6. train whose checkpoint no longer fits keeps the run in TMPDIR and says where"
  if [ -n "$KEPT" ]; then
    expect_ok "6. the kept run resumes to another --out" -t "$QUICK" -- "$SEQ" train --resume "$KEPT" --out "$W/elsewhere/m2.safetensors"
    rm -f "$KEPT" "$W/elsewhere/m2.safetensors" "$W/elsewhere/m2.training.svg"
  fi
  umount "$W/small" && SMALL_MOUNTED=0
else
  echo "skip: cannot mount a small tmpfs ($(head -n 1 "$W/log/mount"))"
fi
expect_error "6. data with stdout closed fails" -- "${STDOUT_CLOSED[@]}" "$SEQ" data --task copy --n 10
run "$TIMEOUT" bash -c '"$1" data --task copy --n 200000 2> "$2" | head -n 1 > "$3"' _ "$SEQ" "$W/log/pipe.err" "$W/log/pipe.out"
[ "$RC" = 124 ] || [ "$RC" = 137 ] && PROBLEMS+=("hung")
[ -s "$W/log/pipe.err" ] && PROBLEMS+=("stderr: $(head -n 1 "$W/log/pipe.err")")
after_checks
report "6. data | head -n 1 prints nothing on stderr"
# Pairs are written as they are made: ten million of them to `| head` once took 14 s and 1.7 GB.
if command -v prlimit > /dev/null 2>&1; then
  run "$QUICK" bash -c 'prlimit --as=300000000 "$1" data --task en-zh --n 10000000 | head -n 1' _ "$SEQ"
  want_ok; [ "$(wc -l < "$OUT")" = 1 ] || PROBLEMS+=("expected one line")
  after_checks
  report "6. data --n 10000000 | head -n 1 under a 300 MB address-space limit ends at once"
fi
# train | head: the run goes on (SIGPIPE is ignored while training), saves, and ends quietly
# (once: exit 2, "cannot write standard output", after a complete run).
run "$TIMEOUT" bash -c '"$1" train --task copy --n 300 --epochs 2 --arch gru --hidden 16 --dim 8 --out "$4" 2> "$2" |
  head -n 1 > "$3"; exit "${PIPESTATUS[0]}"' _ "$SEQ" "$W/log/trainpipe.err" "$W/log/trainpipe.out" "$W/trainpipe.safetensors"
[ "$RC" = 0 ] || PROBLEMS+=("exit $RC, expected 0")
[ -s "$W/log/trainpipe.err" ] && PROBLEMS+=("stderr: $(head -n 1 "$W/log/trainpipe.err")")
[ -s "$W/trainpipe.safetensors" ] || PROBLEMS+=("no checkpoint")
rm -f "$W/trainpipe.safetensors" "$W/trainpipe.training.svg"
after_checks
report "6. train | head -n 1 trains, saves and ends quietly with exit 0"

# ================================================================================================
# 7. Corpora: a bad line is reported as FILE:LINE before any training

"$SEQ" data --task copy --n 50 --seed 3 > "$W/corpus/good.tsv" 2>> "$W/log/shell"
# with_line3 NAME FORMAT: corpus/NAME.tsv, good.tsv with line 3 replaced by printf FORMAT
with_line3() {
  # shellcheck disable=SC2059  # the format is the point: it holds the \377 and \t escapes
  { head -n 2 "$W/corpus/good.tsv"; printf "$2"; tail -n +4 "$W/corpus/good.tsv"; } > "$W/corpus/$1.tsv"
}
with_line3 bad_utf8 'a \377 b\ta b\n'
with_line3 no_tab 'a b c\n'
with_line3 empty_source '\ta b\n'
with_line3 empty_target 'a b\t\n'
for corpus in bad_utf8 no_tab empty_source empty_target; do
  run "$QUICK" "$SEQ" train --train "$W/corpus/$corpus.tsv" --epochs 2 "${TINY[@]}" --out "$W/corpus/c.safetensors"
  want_error
  grep -q '^epoch' "$OUT" && PROBLEMS+=("trained before failing")
  grep -qE "$corpus\.tsv'?:3" "$ERR" || PROBLEMS+=("stderr does not name $corpus.tsv:3")
  after_checks
  report "7. train --train $corpus.tsv (line 3) fails before training, naming $corpus.tsv:3"
done
run "$QUICK" "$SEQ" train --task copy --n 200 --epochs 2 "${TINY[@]}" --out ''
want_error
grep -q '^epoch' "$OUT" && PROBLEMS+=("trained before failing")
after_checks
report "7. train --out '' fails before training"
mkdir -p "$W/corpus/somedir"
for path in "$W/corpus/somedir" "$W/corpus/missing.tsv"; do
  run "$QUICK" "$SEQ" train --train "$path" --epochs 1 "${TINY[@]}" --out "$W/corpus/c.safetensors"
  want_error
  grep -qi 'no sentence pairs' "$ERR" && PROBLEMS+=("says 'no sentence pairs' instead of why the file cannot be read")
  after_checks
  report "7. train --train ${path#"$W"/} fails saying why"
done

# Corpora from a pipe, a FIFO and a device: read once (the corpus was read twice, once for its
# fingerprint: from a pipe it then had "no sentence pairs", a FIFO hung, /dev/zero spun forever).
run "$TIMEOUT" bash -c '"$1" data --task copy --n 200 --seed 3 | "$1" train --train /dev/stdin --epochs 1 "${@:3}" --out "$2"' \
  _ "$SEQ" "$W/corpus/p.safetensors" "${TINY[@]}"
want_ok; loadable "$W/corpus/p.safetensors" || PROBLEMS+=("no loadable checkpoint")
after_checks
report "7. train --train /dev/stdin reads a corpus from a pipe"
mkfifo "$W/corpus/fifo.tsv"
run "$TIMEOUT" bash -c '"$1" data --task copy --n 200 --seed 3 > "$2" & exec "$1" train --train "$2" --epochs 1 "${@:4}" --out "$3"' \
  _ "$SEQ" "$W/corpus/fifo.tsv" "$W/corpus/f.safetensors" "${TINY[@]}"
want_ok; loadable "$W/corpus/f.safetensors" || PROBLEMS+=("no loadable checkpoint")
after_checks
report "7. train --train FIFO reads the corpus its writer sends"
run "$QUICK" "$SEQ" train --train /dev/zero --epochs 1 "${TINY[@]}" --out "$W/corpus/z.safetensors"
want_error
grep -qx "error: cannot read '/dev/zero': expected a file or a pipe, got a character device (save what it gives to a file first)" "$ERR" ||
  PROBLEMS+=("not the message for a device")
after_checks
report "7. train --train /dev/zero is refused at once"
run "$QUICK" bash -c 'head -c 100000000 /dev/zero | exec "$1" train --train /dev/stdin --epochs 1 "${@:3}" --out "$2"' \
  _ "$SEQ" "$W/corpus/z.safetensors" "${TINY[@]}"
want_error
grep -qx "error: /dev/stdin:1: expected text, found a NUL byte at column 1" "$ERR" || PROBLEMS+=("not the message for NUL bytes")
after_checks
report "7. train --train /dev/stdin fed zeros stops at the first NUL byte"
rm -rf "$W/corpus/"*.safetensors "$W/corpus/"*.svg "$W/corpus/fifo.tsv"

# ================================================================================================
# 8. Odds and ends: usage, stdin, resume bookkeeping, a long file name, unknown words

run "$QUICK" "$SEQ"
[ "$RC" = 2 ] || PROBLEMS+=("expected exit 2")
grep -qi usage "$ERR" || PROBLEMS+=("no usage on stderr")
after_checks
report "8. seqgrad without arguments: exit 2, usage on stderr"

mkdir -p "$W/e/somedir"
expect_error "8. translate with stdin a directory fails" -t "$QUICK" -- \
  "${STDIN_FROM[@]}" "$W/e/somedir" "$SEQ" translate --model "$W/m.safetensors"

if [ "$HAVE_RESUME" = 1 ]; then
  expect_error "8. train --resume (stopped in epoch $R_EPOCH) --epochs 1 fails" -t "$QUICK" -- \
    "$SEQ" train --resume "$R" --epochs 1
  unguard "$R"
  unguard "$W/r/m.safetensors"
  run "$TIMEOUT" "$SEQ" train --resume "$R"
  want_ok
  [ -e "$R" ] && PROBLEMS+=("r/m.resume.safetensors is still there")
  after_checks
  report "8. a resumed run that finishes removes r/m.resume.safetensors"
fi

long=$W/e/$(printf 'a%.0s' $(seq 240)).safetensors
run "$TIMEOUT" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$long"
want_ok
[ -f "$long" ] || PROBLEMS+=("no checkpoint saved")
after_checks
report "8. train --out with a 252-character file name saves"

run "$QUICK" "$SEQ" translate --model "$W/m.safetensors" "qqq zzz"
want_ok
grep -q qqq "$ERR" || PROBLEMS+=("no warning naming qqq on stderr")
after_checks
report "8. translate with unknown words warns about them"

# translate reads its lines as they arrive: on endless input it translates and prints in bounded
# memory (it read all of stdin first, so `yes | seqgrad translate | head -1` printed nothing while
# memory grew without bound), and a line is printed while stdin stays open.
if command -v prlimit > /dev/null 2>&1; then
  run "$QUICK" bash -c 'yes "a b c" | prlimit --as=500000000 "$1" translate --model "$2" | head -n 1' _ "$SEQ" "$W/m.safetensors"
  want_ok; [ "$(wc -l < "$OUT")" = 1 ] || PROBLEMS+=("expected one line on stdout")
  after_checks
  report "8. yes | translate | head -n 1 under a 500 MB address-space limit prints its line and ends"
else
  echo "skip: no prlimit; translate's bounded memory is not checked"
fi
: > "$W/log/stream.out"
{ { echo "a b c"; sleep 20; } | timeout -k 5 "$TIMEOUT" "$SEQ" translate --model "$W/m.safetensors" > "$W/log/stream.out" 2> "$ERR" &
  STREAM_PID=$!
  polls=0
  until [ -s "$W/log/stream.out" ] || ((++polls > 500)); do sleep 0.01; done
  PROBLEMS=()
  [ -s "$W/log/stream.out" ] || PROBLEMS+=("no translation within 5 s while stdin stayed open")
  kill "$STREAM_PID" 2>/dev/null; wait "$STREAM_PID"; } 2>> "$W/log/shell"  # (the sleep ends by itself)
after_checks
report "8. translate prints a line's translation while stdin stays open"
run "$QUICK" bash -c 'head -c 30000000 /dev/zero | exec "$1" translate --model "$2"' _ "$SEQ" "$W/m.safetensors"
want_error
grep -qx "error: seqgrad translate: line 1: expected a line of at most 16 MiB, found a longer one" "$ERR" ||
  PROBLEMS+=("not the message for an endless line")
after_checks
report "8. translate fed an endless line stops at 16 MiB, naming the line"

# A small stack: under `ulimit -s 16` the tool died of SIGSEGV at random, even before main (and
# translate always, with a 64 KB buffer on the stack). A soft limit is raised as far as the hard
# one allows; a hard limit too small for a run is one line saying what to do. (Below 16 KB not
# even /bin/true starts: the dynamic loader needs that much.)
PROBLEMS=()
for i in 1 2 3 4 5 6; do
  { timeout -k 5 "$QUICK" "${ULIMIT[@]}" -Ss 16 "$SEQ" data --task copy --n 3 > "$OUT" 2> "$ERR" < "$EMPTY"; RC=$?; } 2>> "$W/log/shell"
  [ "$RC" = 0 ] || { PROBLEMS+=("run $i: $(ending)"); break; }
done
run "$TIMEOUT" "${ULIMIT[@]}" -Ss 16 "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]:0:8}" --threads 2 --out "$W/e/s.safetensors"
[ "$RC" = 0 ] || PROBLEMS+=("train: $(ending)")
run "$QUICK" "${STDIN_FROM[@]}" "$W/test.tsv" "${ULIMIT[@]}" -Ss 16 "$SEQ" translate --model "$W/m.safetensors"
[ "$RC" = 0 ] || PROBLEMS+=("translate: $(ending)")
after_checks
report "8. under a soft stack limit of 16 KB, data (6 runs), train on 2 threads and translate from stdin succeed"
rm -f "$W/e/s.safetensors" "$W/e/s.training.svg"
run "$QUICK" "${ULIMIT[@]}" -s 64 "$SEQ" data --task copy --n 3
want_error
grep -qx "error: seqgrad: the stack is limited to 64 KB and the hard limit allows no more; expected at least 256 KB: run it after 'ulimit -s 8192'" "$ERR" ||
  PROBLEMS+=("not the message for a small hard stack limit")
after_checks
report "8. under a hard stack limit of 64 KB the tool says what it needs and exits 2"

# ================================================================================================
# 9. An output that is also an input, or another output, is refused before anything is written
#    (files compared by device and inode: a hard link is the same file); every input stays byte
#    for byte as it was. (--loss-log c.tsv used to empty the corpus before reading it.)

cp "$W/corpus/good.tsv" "$W/e/c.tsv" && guard "$W/e/c.tsv"
ln -f "$W/e/c.tsv" "$W/e/c-link.tsv"
TRAIN_C=(train --train "$W/e/c.tsv" --epochs 1 "${TINY[@]}")
overlap() {  # overlap NAME EXPECTED-IN-STDERR ARGS...
  local name=$1 expected=$2
  shift 2
  run "$QUICK" "$SEQ" "$@"
  want_error
  grep -q '^epoch' "$OUT" && PROBLEMS+=("trained before failing")
  [ -n "$expected" ] && ! grep -q -- "$expected" "$ERR" && PROBLEMS+=("stderr does not say '$expected'")
  after_checks
  report "9. $name"
}
overlap "train --loss-log naming the --train corpus is refused" "is the same file as --train" \
  "${TRAIN_C[@]}" --out "$W/e/o.safetensors" --loss-log "$W/e/c.tsv"
overlap "train --loss-log naming the corpus through a hard link is refused" "is the same file as --train" \
  "${TRAIN_C[@]}" --out "$W/e/o.safetensors" --loss-log "$W/e/c-link.tsv"
overlap "train --out naming the --train corpus is refused" "is the same file as --train" "${TRAIN_C[@]}" --out "$W/e/c.tsv"
overlap "train --loss-log naming --out is refused" "is the same file as --out" \
  "${TRAIN_C[@]}" --out "$W/e/o.safetensors" --loss-log "$W/e/o.safetensors"
overlap "train --valid naming --out is refused" "is the same file as --valid" \
  "${TRAIN_C[@]}" --valid "$W/m.safetensors" --out "$W/m.safetensors"
overlap "train with a bad flag value does not open --loss-log first" "" \
  "${TRAIN_C[@]}" --out "$W/e/o.safetensors" --loss-log "$W/m.safetensors" --batch-tokens 2
overlap "attention --svg naming --model is refused" "is the same file as --model" \
  attention --model "$W/t.safetensors" --svg "$W/t.safetensors" a b
unguard "$W/e/c.tsv"
rm -f "$W/e/c.tsv" "$W/e/c-link.tsv"

# ================================================================================================
# 10. The examples parse their command lines as the tool does: --help helps and does nothing
#     else, an unknown flag or a stray word is one line and exit 2, a list names nothing twice.
#     (02_mlp used to abort on a file name, and train for --help in a folder named --help.)

EX=$BUILD/examples
if [ -x "$EX/02_mlp" ]; then
  mkdir -p "$W/ex" && : > "$W/ex/afile" && cd "$W/ex" || exit 2
  run "$QUICK" "$EX/02_mlp" --help
  want_ok
  grep -q "^usage: 02_mlp" "$OUT" || PROBLEMS+=("no usage printed")
  [ -e "$W/ex/--help" ] && PROBLEMS+=("made a folder named --help")
  after_checks
  report "10. 02_mlp --help prints the usage and trains nothing"
  for args in "afile" "" "--out afile" "--out" "--bogus"; do
    # shellcheck disable=SC2086  # split on purpose; "" stays one empty word below
    if [ -z "$args" ]; then set -- ""; else set -- $args; fi
    expect_error "10. 02_mlp '$args' fails with a message" -t "$QUICK" -- "$EX/02_mlp" "$@"
  done
  for example in 01_autograd_basics 07_self_attention 08_extending; do
    expect_error "10. $example --bogus fails with a message" -t "$QUICK" -- "$EX/$example" --bogus
  done
  run "$QUICK" "$EX/02_mlp" --out afile
  want_error
  grep -qx "error: 02_mlp: --out 'afile' expects a folder, got a file" "$ERR" || PROBLEMS+=("not the message for a file as --out")
  after_checks
  report "10. 02_mlp --out naming a file says it expects a folder"
  expect_error "10. 05_attention --models dot,dot is refused" -t "$QUICK" -- "$EX/05_attention" --models dot,dot
  expect_error "10. 13_gnmt --models gnmt-4,gnmt-4 is refused" -t "$QUICK" -- "$EX/13_gnmt" --models gnmt-4,gnmt-4
  cd "$W" || exit 2
fi

# The kernel a user names in SEQGRAD_KERNEL must exist (this CPU's list differs from machine to
# machine, so only the unknown name's message is pinned whole).
run "$QUICK" env SEQGRAD_KERNEL=bogus "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$W/e/k.safetensors"
want_error
grep -qx "error: SEQGRAD_KERNEL: unknown kernel; expected one of generic, avx2, avx512, got 'bogus'" "$ERR" ||
  PROBLEMS+=("not the message for an unknown SEQGRAD_KERNEL")
after_checks
report "10. SEQGRAD_KERNEL=bogus is refused with the kernels it could name"

# Threads the system refuses (here: 256 stacks do not fit a 1 GB address space) are an error
# naming the thread and what to do, quickly; once the signals stayed blocked and the program hung
# until SIGKILL (the timeout's SIGTERM could not end it), or aborted.
if command -v prlimit > /dev/null 2>&1; then
  run "$QUICK" prlimit --as=1000000000 "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]:0:8}" --threads 256 \
    --out "$W/e/t.safetensors"
  want_error
  grep -q "^error: thread pool: cannot start thread [0-9]* of 256 (.*); ask for fewer threads" "$ERR" ||
    PROBLEMS+=("not the message for a thread the system refused")
  after_checks
  report "10. train --threads 256 under a 1 GB address-space limit fails at once, naming the thread"
else
  echo "skip: no prlimit; the thread-creation failure is not checked"
fi

# ================================================================================================
# 11. A run whose loss becomes NaN stops there, says where and what to try, exits non-zero, and
#     leaves the checkpoint it would otherwise have overwritten (it used to exit 0, saving none).

if [ -f "$W/m.safetensors" ]; then
  cp "$W/m.safetensors" "$W/e/d.safetensors" && guard "$W/e/d.safetensors"
  run "$TIMEOUT" "$SEQ" train --task reverse --n 1000 --epochs 2 --optimizer sgd --clip 0 --lr 10 --schedule constant \
    --threads 1 --out "$W/e/d.safetensors"
  want_error
  grep -q "the loss became NaN at step [0-9]* of epoch 1: the run diverged, and the last checkpoint" "$ERR" ||
    PROBLEMS+=("stderr does not say where the loss became NaN")
  grep -q -- "--detect-anomaly" "$ERR" || PROBLEMS+=("stderr does not suggest --detect-anomaly")
  after_checks
  report "11. a run that diverges to NaN stops with an error naming the step, and keeps the last checkpoint"
  unguard "$W/e/d.safetensors"
  rm -f "$W/e/d.safetensors" "$W/e/d.training.svg"
fi

# ================================================================================================
# 12. A link or a FIFO planted at a name the tool writes: the link's target never changes, a
#     FIFO never hangs. A temporary file used to be opened by its guessable name, NAME.tmp.PID:
#     a link planted there by another user was written through (`train --out` emptied the file
#     it pointed to; `attention --svg` wrote the picture into it) and a FIFO there hung the tool.

d=$W/planted && rm -rf "$d" && mkdir -p "$d"
# plant_and_run NAMES -- CMD...: a shell that knows its own PID plants, for each NAME, a link to
# victim.NAME at the NAME.tmp.PID it will have once it execs CMD; stdout and stderr as run's.
plant_and_run() {
  local names=()
  while [ "$1" != -- ]; do names+=("$1"); shift; done
  shift
  for n in "${names[@]}"; do echo "keep $n" > "$d/victim.$n"; done
  PROBLEMS=()
  LIMIT=$TIMEOUT
  { timeout -k 5 "$TIMEOUT" bash -c 'd=$1; shift; n=$1; shift; for f in $n; do ln -s "$d/victim.$f" "$d/$f.tmp.$$"; done
      exec "$@"' _ "$d" "${names[*]}" "$@" > "$OUT" 2> "$ERR" < "$EMPTY"; RC=$?; } 2>> "$W/log/shell"
  for n in "${names[@]}"; do
    [ "$(cat "$d/victim.$n")" = "keep $n" ] || PROBLEMS+=("wrote through the link planted at $n.tmp.PID")
    find "$d" -maxdepth 1 -name "$n.tmp.*" -type l -delete  # the planted links: not the tool's leftovers
  done
}
plant_and_run m.safetensors m.training.svg -- "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$d/m.safetensors"
want_ok; after_checks
report "12. train: links planted at the temporary names of the checkpoint and the plot are not written through"
if [ -f "$W/t.safetensors" ]; then
  plant_and_run a.svg t.svg h.html -- "$SEQ" attention --model "$W/t.safetensors" --beam 2 --svg "$d/a.svg" \
    --tree "$d/t.svg" --html "$d/h.html" "a b c"
  want_ok; after_checks
  report "12. attention: links planted at the temporary names of --svg, --tree and --html are not written through"
fi
if [ -f "$W/m.safetensors" ]; then
  plant_and_run avg.safetensors -- "$SEQ" average --out "$d/avg.safetensors" "$W/m.safetensors" "$W/m.safetensors"
  want_ok; after_checks
  report "12. average: a link planted at the temporary name of --out is not written through"
fi
# A link at the output's own name is replaced by the new file; what it pointed to is untouched.
echo "keep me" > "$d/target.txt" && ln -s "$d/target.txt" "$d/linked.safetensors"
run "$TIMEOUT" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$d/linked.safetensors"
want_ok
[ "$(cat "$d/target.txt")" = "keep me" ] || PROBLEMS+=("wrote through the link at --out")
{ [ -f "$d/linked.safetensors" ] && [ ! -L "$d/linked.safetensors" ] && loadable "$d/linked.safetensors"; } ||
  PROBLEMS+=("--out is not a loadable checkpoint in place of the link")
after_checks
report "12. train --out naming a link replaces the link with the checkpoint; the link's target is untouched"
# --loss-log is written in place as the run goes: a link there is refused, a FIFO refused at once.
ln -s "$d/target.txt" "$d/log-link.txt" && mkfifo "$d/log-fifo"
run "$QUICK" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$d/l.safetensors" --loss-log "$d/log-link.txt"
want_error
grep -qx "error: seqgrad train: cannot write --loss-log '$d/log-link.txt': expected a regular file, a new name or a character device, got a symbolic link" "$ERR" ||
  PROBLEMS+=("not the message for a link as --loss-log")
[ "$(cat "$d/target.txt")" = "keep me" ] || PROBLEMS+=("wrote through the link at --loss-log")
after_checks
report "12. train --loss-log naming a link is refused, the link's target untouched"
run "$QUICK" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$d/l.safetensors" --loss-log "$d/log-fifo"
want_error
grep -q "got a pipe$" "$ERR" || PROBLEMS+=("not the message for a FIFO as --loss-log")
node_kind_is -p "$d/log-fifo"; after_checks
report "12. train --loss-log naming a FIFO is refused at once (no reader awaited)"
# FIFOs at every output name of train and attention: refused at once, each still a FIFO.
for out in m.safetensors m.training.svg m.resume.safetensors; do
  rm -rf "$d/f" && mkdir "$d/f" && mkfifo "$d/f/$out"
  run "$QUICK" "$SEQ" train --task copy --n 200 --epochs 1 "${TINY[@]}" --out "$d/f/m.safetensors"
  want_error; grep -q "got a pipe$" "$ERR" || PROBLEMS+=("not the message for a FIFO")
  node_kind_is -p "$d/f/$out"; after_checks
  report "12. train with a FIFO at $out is refused at once"
done
for flag in --svg --tree --html; do
  rm -rf "$d/f" && mkdir "$d/f" && mkfifo "$d/f/out"
  run "$QUICK" "$SEQ" attention --model "$W/t.safetensors" --beam 2 "$flag" "$d/f/out" "a b c"
  want_error; grep -q "got a pipe$" "$ERR" || PROBLEMS+=("not the message for a FIFO")
  node_kind_is -p "$d/f/out"; after_checks
  report "12. attention $flag naming a FIFO is refused at once"
done
rm -rf "$d"

echo "# took $SECONDS s"
echo "faults: $passed passed, $failed failed"
[ "$failed" = 0 ]
