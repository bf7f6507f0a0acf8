#!/bin/sh
# tests/examples/pytorch_script_faults.sh - the PyTorch scripts of chapter 15 (docs/to_pytorch.py
# and docs/train_pytorch.py) refuse bad input as the seqgrad tool does: with one line on stderr
# naming the file (or flag), what was expected and what was found, exit status 2, and never a
# traceback, a hang, or a good file destroyed.
#
#   sh tests/examples/pytorch_script_faults.sh [BUILD]   (tests/examples/to_pytorch.sh runs it)
#
# It trains a tiny Transformer with BUILD/seqgrad (default build), then breaks its checkpoint in
# every way the reader must catch (truncated; a header length past the end; a header that is not
# JSON, not an object, not UTF-8, or nested 100000 deep; a dtype, shape or byte range that does
# not fit; a missing or extra tensor; metadata and configuration missing, malformed or
# impossible; bad vocabularies and merges), feeds bad corpora, numbers out of range and outputs
# that cannot be written, and limits the file size during a write to check that the old file is
# kept byte for byte and no temporary is left. Most cases run in one Python process, through
# each script's main() (which is what a command line runs), to keep the PyTorch imports few; a
# few run as real processes to show the exit status and stderr of a command. Each prints
# "ok - WHAT" or "FAIL - WHAT (WHY)"; the last line is "pytorch-script-faults: N passed, M
# failed", and the exit status 1 if any failed. SCRIPTS_DIR (default docs) says where the two
# scripts are, so the same cases can be run against other versions of them.
#
# Needs a Python that imports torch, found as tests/examples/to_pytorch.sh finds it; without one
# it prints "skipped: PyTorch not installed" and exits 0.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
SEQ=$BUILD/seqgrad
SCRIPTS=${SCRIPTS_DIR:-docs}

PY=""
for candidate in ${SEQGRAD_PYTHON-/usr/bin/python3 python3}; do
  if "$candidate" -c "import torch" >/dev/null 2>&1; then PY=$candidate; break; fi
done
[ -n "$PY" ] || { echo "skipped: PyTorch not installed"; exit 0; }
[ -x "$SEQ" ] || { echo "pytorch-script-faults: $SEQ is not built (run make)" >&2; exit 2; }
export PYTHONDONTWRITEBYTECODE=1  # leave no __pycache__ beside the scripts

W=$(mktemp -d "${TMPDIR:-/tmp}/pytorch_faults.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT INT TERM
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "FAIL - $1 ($2)"; failed=$((failed + 1)); }

timeout 120 "$SEQ" train --task copy --n 300 --epochs 1 --arch transformer --layers 1 --dim 16 --heads 2 --ffn 32 \
  --threads 1 --out "$W/t.safetensors" >"$W/seqgrad.out" 2>&1 &&
  timeout 60 "$SEQ" data --task copy --n 100 >"$W/c.tsv" ||
  { echo "pytorch-script-faults: seqgrad could not make the checkpoint: $(tail -1 "$W/seqgrad.out")" >&2; exit 2; }

# ---- in one Python process: each case through the script's main(), as a command line runs it --
# A case passes when main() ends with exit status 2, exactly one line on stderr naming the file
# or flag, and no traceback; one that would wait forever is stopped after 10 s and fails.
timeout 600 "$PY" - "$SCRIPTS" "$W" "$SEQ" >"$W/cases.out" 2>&1 <<'EOF'
import contextlib, copy, io, json, os, signal, struct, sys, traceback
scripts, W, seqgrad = sys.argv[1:4]
sys.path.insert(0, scripts)
import to_pytorch, train_pytorch


class Hung(Exception):
    pass


def stop(signum, frame):
    raise Hung()


signal.signal(signal.SIGALRM, stop)


def run_main(module, argv, seconds=10):
    """(exit status, stdout, stderr) of module.main() run with argv, as the process would end:
    SystemExit's code (a message: status 1, the message on stderr), a traceback for any other
    exception, "hung" when stopped after `seconds`."""
    out, err = io.StringIO(), io.StringIO()
    sys.argv, status = [module.__file__] + argv, 0
    signal.alarm(seconds)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            module.main()
    except SystemExit as e:
        status = e.code or 0
        if isinstance(e.code, str):  # sys.exit("message"): Python prints it, status 1
            err.write(f"{e.code}\n")
            status = 1
    except Hung:
        status = "hung"
    except BaseException:
        err.write(traceback.format_exc())
        status = 1
    finally:
        signal.alarm(0)
    return status, out.getvalue(), err.getvalue()


def case(what, module, argv, names):
    """One case: main() must refuse with status 2, one stderr line naming `names`, no traceback,
    and before any training step."""
    status, out, err = run_main(module, argv)
    why, lines = [], err.splitlines()
    if status != 2:
        why.append(f"exit status {status}, expected 2")
    if len(lines) != 1:
        why.append(f"{len(lines)} lines on stderr, expected 1")
    if "Traceback" in out + err:
        why.append("a traceback")
    if names not in err:
        why.append(f"the message does not name {names}")
    if "step " in out:
        why.append("it trained first")
    last = lines[-1][:160] if lines else ""
    print(f"ok - {what}: {last}" if not why else f"FAIL - {what} ({'; '.join(why)}: {last!r})", flush=True)


# ---- checkpoints made wrong: a few bytes changed in a good one --------------------------------
good = open(f"{W}/t.safetensors", "rb").read()
(n,) = struct.unpack("<Q", good[:8])
HEADER, DATA = json.loads(good[8:8 + n]), good[8 + n:]
META = HEADER["__metadata__"]
CONFIG = json.loads(META["seqgrad.config"])


def put(name, raw):
    path = f"{W}/{name}"
    with open(path, "wb") as f:
        f.write(raw)
    return path


def packed(header_text, data=b""):
    return struct.pack("<Q", len(header_text)) + header_text + data


def crafted(name, change=None, data=DATA):
    """The good checkpoint with its header (a copy) changed by change(header)."""
    header = copy.deepcopy(HEADER)
    if change:
        change(header)
    return put(name, packed(json.dumps(header).encode(), data))


def meta(**entries):  # the metadata entries set (None: removed)
    def change(header):
        for key, value in entries.items():
            key = key.replace("__", ".")
            header["__metadata__"].pop(key) if value is None else header["__metadata__"].__setitem__(key, value)
    return change


def config(**entries):  # the configuration's keys set (None: removed)
    c = dict(CONFIG)
    for key, value in entries.items():
        c.pop(key) if value is None else c.__setitem__(key, value)
    return meta(seqgrad__config=json.dumps(c))


def tensor(name, **fields):
    return lambda header: header[name].update(fields)


last = max((k for k in HEADER if k != "__metadata__"), key=lambda k: HEADER[k]["data_offsets"][0])
cut = HEADER[last]["data_offsets"][0]  # the data without the last tensor's bytes
rows, columns = HEADER["src_embed.weight"]["shape"]
VOCAB = json.loads(META["seqgrad.src_vocab"])
checkpoints = [
    ("truncated to 100 bytes", put("short.safetensors", good[:100])),
    ("truncated in the data (1000 bytes cut)", put("cut.safetensors", good[:-1000])),
    ("5 bytes, no header length", put("tiny.safetensors", good[:5])),
    ("a header length past the end (a text file)", put("text.safetensors", b"<!DOCTYPE html><p>a web page</p>\n")),
    ("a header that is not JSON", put("notjson.safetensors", packed(b"{not json at all}   "))),
    ("a header that is not UTF-8", put("utf8.safetensors", packed(b'{"a\xff": 1}'))),
    ("a header that is a JSON list", put("list.safetensors", packed(b"[1, 2, 3]"))),
    ("a header nested 100000 deep", put("deep.safetensors", packed(b"[" * 100000 + b"]" * 100000))),
    ("a tensor entry that is not an object", crafted("entry.safetensors", lambda h: h.__setitem__(last, 5))),
    ("dtype F16", crafted("f16.safetensors", tensor("src_embed.weight", dtype="F16"))),
    ("a shape that does not fit its bytes",
     crafted("shape.safetensors", tensor("src_embed.weight", shape=[rows, columns + 1]))),
    ("a negative size in a shape", crafted("negative.safetensors", tensor("src_embed.weight", shape=[-rows, -columns]))),
    ("data_offsets past the data", crafted("offsets.safetensors", tensor(last, data_offsets=[cut, 10**12]))),
    ("two tensors on the same bytes",
     crafted("overlap.safetensors", tensor("tgt_embed.weight", data_offsets=HEADER["src_embed.weight"]["data_offsets"]))),
    ("metadata values that are not strings", crafted("metaobj.safetensors", meta(seqgrad__config=CONFIG))),
    ("no seqgrad.format (not a seqgrad model)", crafted("noformat.safetensors", meta(seqgrad__format=None))),
    ("no seqgrad.config", crafted("noconfig.safetensors", meta(seqgrad__config=None))),
    ("a seqgrad.config that is not JSON", crafted("badconfig.safetensors", meta(seqgrad__config="{dim: 16"))),
    ("a seqgrad.config that is a list", crafted("listconfig.safetensors", meta(seqgrad__config="[]"))),
    ("a configuration without 'dim'", crafted("nodim.safetensors", config(dim=None))),
    ("a configuration with heads 3, not dividing dim 16", crafted("heads.safetensors", config(heads=3))),
    ("a configuration with dim 0", crafted("dim0.safetensors", config(dim=0))),
    ("a configuration with layers \"two\"", crafted("layers.safetensors", config(layers="two"))),
    ("a configuration with dropout 5", crafted("dropout.safetensors", config(dropout=5))),
    ("a configuration far larger than the tensors", crafted("large.safetensors", config(dim=512, heads=8, ffn=16384))),
    ("a configuration a little larger than the tensors", crafted("larger.safetensors", config(layers=2))),
    ("a tensor of the wrong shape", crafted("transposed.safetensors", tensor("src_embed.weight", shape=[columns, rows]))),
    ("a tensor missing", crafted("missing.safetensors", lambda h: h.pop(last), DATA[:cut])),
    ("a tensor too many", crafted("extra.safetensors", lambda h: h.__setitem__(
        "extra.weight", {"dtype": "F32", "shape": [1], "data_offsets": [len(DATA), len(DATA) + 4]}), DATA + bytes(4))),
    ("no seqgrad.tgt_vocab", crafted("novocab.safetensors", meta(seqgrad__tgt_vocab=None))),
    ("a vocabulary that is a string",
     crafted("strvocab.safetensors", meta(seqgrad__src_vocab=json.dumps("".join(VOCAB))))),
    ("a vocabulary without <pad> first", crafted("nopad.safetensors", meta(
        seqgrad__src_vocab=json.dumps(["x"] + VOCAB[1:])))),
    ("a vocabulary with a token twice", crafted("twice.safetensors", meta(
        seqgrad__src_vocab=json.dumps(VOCAB[:-1] + [VOCAB[4]])))),
    ("bpe merges that are not 'left right'", crafted("merges.safetensors", lambda h: (
        config(src_tokens="bpe")(h), h["__metadata__"].__setitem__("seqgrad.src_bpe", '["abc"]')))),
    ("a folder as the model", W),
    ("a missing model file", f"{W}/nothing.safetensors"),
]
os.mkfifo(f"{W}/fifo.safetensors")
checkpoints.append(("a FIFO as the model", f"{W}/fifo.safetensors"))
for what, path in checkpoints:
    case(f"to_pytorch: {what}", to_pytorch, [path, "a b", "--seqgrad", seqgrad], path)

# ---- corpora, sentences and flags of to_pytorch.py -------------------------------------------
model = f"{W}/t.safetensors"
tsv = {name: put(f"{name}.tsv", text) for name, text in [
    ("notab", b"a b\tb a\nc d e\n"), ("utf8", b"a b\tb a\nc \xff\td\n"), ("control", b"a\x0bb\tc\n"), ("empty", b"\n \n")]}
for what, argv, names in [
    ("--data with a line without a tab", ["--data", tsv["notab"]], tsv["notab"]),
    ("--data with invalid UTF-8", ["--data", tsv["utf8"]], tsv["utf8"]),
    ("--data with a control character", ["--data", tsv["control"]], tsv["control"]),
    ("--data with no pairs", ["--data", tsv["empty"]], tsv["empty"]),
    ("--data a folder", ["--data", W], W),
    ("a sentence with a control character", ["a\x01b"], "sentence 1"),
    ("--tolerance nan", ["a b", "--tolerance", "nan"], "--tolerance"),
    ("--tolerance -1", ["a b", "--tolerance", "-1"], "--tolerance"),
    ("--show -1", ["a b", "--show", "-1"], "--show"),
    ("--seqgrad a missing tool", ["a b", "--seqgrad", f"{W}/no-seqgrad"], f"{W}/no-seqgrad"),
]:
    tool = [] if "--seqgrad" in argv else ["--seqgrad", seqgrad]
    case(f"to_pytorch: {what}", to_pytorch, [model] + argv + tool, names)

# ---- train_pytorch.py: flags, corpora and outputs, all refused before any training ------------
copy_of_model = put("model-copy.safetensors", good)
copy_of_corpus = put("train-copy.tsv", open(f"{W}/c.tsv", "rb").read())
os.symlink(copy_of_model, f"{W}/link.safetensors")
os.mkfifo(f"{W}/fifo-out.safetensors")
os.mkdir(f"{W}/folder.safetensors")
train = ["--train", f"{W}/c.tsv", "--steps", "2"]
for what, argv, names in [
    ("--processes 0", ["--processes", "0"], "--processes"),
    ("--steps 0", ["--steps", "0"], "--steps"),
    ("--batch 0", ["--batch", "0"], "--batch"),
    ("--batch 1 --processes 2", ["--batch", "1", "--processes", "2"], "--batch"),
    ("--lr 0", ["--lr", "0"], "--lr"),
    ("--lr nan", ["--lr", "nan"], "--lr"),
    ("--clip -1", ["--clip", "-1"], "--clip"),
    ("--log-every 0", ["--log-every", "0"], "--log-every"),
    ("--label-smoothing 1.5", ["--label-smoothing", "1.5"], "--label-smoothing"),
    ("--seed -1", ["--seed", "-1"], "--seed"),
    ("--train with no pairs", ["--train", tsv["empty"]], tsv["empty"]),
    ("--train with a line without a tab", ["--train", tsv["notab"]], tsv["notab"]),
    ("--valid with invalid UTF-8", ["--valid", tsv["utf8"]], tsv["utf8"]),
    ("--out in a missing folder", ["--out", f"{W}/no-folder/x.safetensors"], f"{W}/no-folder/x.safetensors"),
    ("--out in a folder that is a file", ["--out", f"{W}/c.tsv/x.safetensors"], f"{W}/c.tsv/x.safetensors"),
    ("--out a FIFO", ["--out", f"{W}/fifo-out.safetensors"], f"{W}/fifo-out.safetensors"),
    ("--out a folder", ["--out", f"{W}/folder.safetensors"], f"{W}/folder.safetensors"),
    ("--out a device", ["--out", "/dev/null"], "/dev/null"),
    ("--out the model itself", ["--out", copy_of_model], copy_of_model),
    ("--out a symlink to the model", ["--out", f"{W}/link.safetensors"], f"{W}/link.safetensors"),
    ("--out the --train file", ["--train", copy_of_corpus, "--out", copy_of_corpus], copy_of_corpus),
]:
    case(f"train_pytorch: {what}", train_pytorch, [copy_of_model] + train + argv, names)
case("train_pytorch: a crafted checkpoint (a header nested 100000 deep)", train_pytorch,
     [f"{W}/deep.safetensors"] + train, f"{W}/deep.safetensors")
if open(copy_of_model, "rb").read() != good:
    print("FAIL - train_pytorch: the model given as --out is unchanged (it was written over)")
else:
    print("ok - train_pytorch: the model given as --out is unchanged")
EOF
status=$?
cat "$W/cases.out"
passed=$((passed + $(grep -c '^ok - ' "$W/cases.out")))
failed=$((failed + $(grep -c '^FAIL - ' "$W/cases.out")))
[ "$status" -eq 0 ] || not_ok "the in-process cases" "the Python process ended with status $status: $(grep -v '^ok - \|^FAIL - ' "$W/cases.out" | tail -1)"

# ---- real processes: the exit status and the one line of stderr a shell sees -----------------
# refused WHAT NAMES COMMAND...: the command must exit with status 2 within 60 s, one line on
# stderr naming NAMES, no traceback.
refused() {
  what=$1 names=$2; shift 2
  timeout 60 "$@" >"$W/run.out" 2>"$W/run.err"
  status=$? why=""
  [ "$status" -eq 2 ] || why="$why exit status $status, expected 2;"
  lines=$(wc -l <"$W/run.err")
  [ "$lines" -eq 1 ] || why="$why $lines lines on stderr, expected 1;"
  ! grep -q Traceback "$W/run.out" "$W/run.err" || why="$why a traceback;"
  grep -qF -- "$names" "$W/run.err" || why="$why the message does not name $names;"
  said=$(head -1 "$W/run.err" | cut -c1-160)
  if [ -z "$why" ]; then ok "$what: $said"; else not_ok "$what" "${why# } $said"; fi
}
T=$SCRIPTS/to_pytorch.py P=$SCRIPTS/train_pytorch.py
refused "command line: to_pytorch.py on a truncated checkpoint" "$W/short.safetensors" \
  "$PY" "$T" "$W/short.safetensors" "a b" --seqgrad "$SEQ"
refused "command line: train_pytorch.py --processes 0" "--processes" \
  "$PY" "$P" "$W/t.safetensors" --train "$W/c.tsv" --processes 0
printf 'a b\tb a\nc d\n' >"$W/bad.tsv"
refused "command line: train_pytorch.py --processes 2 with a corpus line without a tab" "$W/bad.tsv" \
  "$PY" "$P" "$W/t.safetensors" --train "$W/bad.tsv" --steps 2 --processes 2

# A file-size limit while the result is written: refused, the old checkpoint kept byte for byte,
# no temporary left beside it. (The limit is below the checkpoint's size, above nothing else.)
if command -v prlimit >/dev/null 2>&1; then
  cp "$W/t.safetensors" "$W/old.safetensors"
  refused "command line: train_pytorch.py under a 20000-byte file-size limit" "$W/old.safetensors" \
    prlimit --fsize=20000 "$PY" "$P" "$W/t.safetensors" --train "$W/c.tsv" --steps 2 --out "$W/old.safetensors"
  if cmp -s "$W/t.safetensors" "$W/old.safetensors"; then ok "the old checkpoint is unchanged, byte for byte"
  else not_ok "the old checkpoint is unchanged, byte for byte" "it changed: $(wc -c <"$W/old.safetensors") bytes now"; fi
  left=$(ls "$W" | grep -c '\.tmp\.')
  if [ "$left" -eq 0 ]; then ok "no temporary file is left beside it"; else not_ok "no temporary file is left beside it" "$left left"; fi
else
  echo "skipped: the file-size limit case (no prlimit here)"
fi

echo "pytorch-script-faults: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
