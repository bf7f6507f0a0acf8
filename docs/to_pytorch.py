#!/usr/bin/env python3
"""docs/to_pytorch.py - a seqgrad Transformer checkpoint as a PyTorch model that translates as seqgrad does.

seqgrad names its parameters as torch.nn.Transformer does, so the checkpoint's tensors load with
load_state_dict(strict=True): no renaming, nothing left over, nothing missing. What the names do
not carry is written here once: the model's configuration (every option in `seqgrad.config`,
each mapped to PyTorch or refused by name) and each side's tokenizer (space, char, or bpe, which
replays the merges saved in the metadata exactly as data/bpe.cpp does). The script then
translates greedily in PyTorch and compares, sentence by sentence, the translation and its
log-probability with what `seqgrad translate --scores` prints; any difference in a token, or in
a log-probability beyond --tolerance, and it exits with status 1.

    python3 docs/to_pytorch.py MODEL.safetensors --data HELD_OUT.tsv [--seqgrad build/seqgrad]
    python3 docs/to_pytorch.py MODEL.safetensors SENTENCE [SENTENCE ...]

Its inputs are checked as the seqgrad tool checks them: a file that is missing, truncated or
crafted (every length, offset, shape and configuration value is checked before it is used), a
corpus line that is not text, a flag out of range, each ends with one line on stderr naming the
file and what was expected and found, and exit status 2. A checkpoint is written all or nothing
(write_file), so a failed write leaves the file that was there as it was.

What this is not: beam search, or the recurrent models (their attention decoders are seqgrad's
own composition). docs/train_pytorch.py goes on training the model in PyTorch and writes it back
with save_checkpoint. Needs PyTorch (Debian: python3-torch); tests/examples/to_pytorch.sh runs
both whenever it is installed, and tests/examples/pytorch_script_faults.sh feeds them bad input.
Chapter 15 (docs/15-where-next.md) walks through them.
"""
import argparse
import json
import math
import os
import re
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading

import torch
from torch import nn

PAD, BOS, EOS, UNK = 0, 1, 2, 3  # the special tokens' ids in every vocabulary (io/special_tokens.h)
SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]  # and their text, the first four tokens of each
FORMAT = "seqgrad-translator-1"  # examples/seqgrad/translator.cpp's kFormat

# ================================================================================================
# Refusals: a bad input is one line, naming the file, what was expected and what was found


class Refused(Exception):
    """A bad input. Raised where the problem is seen; main() prints the message as one line after
    the script's name and exits with status 2, as the seqgrad tool does for a mistake."""


def refused(path, what):
    """Refused("'path': what"), the form of every message about a file."""
    return Refused(f"'{path}': {what}")


def shown(value, limit=80):
    """A value from a file as JSON on one line (a newline in it is written \\n), cut to `limit`
    characters: a crafted value can be long, or nested too deeply to write at all."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return "(a value too deeply nested to show)"
    return text if len(text) <= limit else text[:limit] + "..."


def quoted(value):
    """A name from a file in quotes, 'name', when it is a short printable string; else as JSON."""
    return f"'{value}'" if isinstance(value, str) and value.isprintable() and len(value) <= 80 else shown(value)


def json_type(value):
    """What a JSON value is, in words, for messages."""
    kinds = ((bool, "true or false"), (dict, "an object"), (list, "a list"), (str, "a string"), ((int, float), "a number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def file_kind(mode):
    """What a file is, from its stat mode, in words, for messages."""
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a regular file")


def read_file(path):
    """The bytes of the regular file at path. It is opened without blocking and checked before it
    is read: a pipe or a device named by mistake would otherwise be waited on, or read forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise refused(path, f"cannot read it: {e.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise refused(path, f"expected a regular file, found {file_kind(mode)}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as e:
        raise refused(path, f"cannot read it: {e.strerror}") from None
    finally:
        os.close(fd)


def write_file(path, data):
    """Writes the bytes `data` to path, all or nothing, as seqgrad writes its files
    (io/atomic_file.h). They go to a new temporary file in the same folder, created exclusively by
    mkstemp (so nothing planted at that name, a symlink say, is written through), are flushed to
    the disk, and only then is the temporary renamed onto path, which replaces the old file in one
    step and never opens it (a pipe there is not waited on). On any failure the temporary is
    removed and the old file is as it was."""
    # A file-size limit (ulimit -f) must fail the write, which is then undone below, rather than
    # kill the process with SIGXFSZ half-way and leave the temporary behind. CPython ignores the
    # signal from start-up, unless it was embedded without its signal handlers; this function
    # does not count on that. (Only the main thread may set a handler; the scripts write there.)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    folder, name = os.path.split(path)
    try:
        fd, temporary = tempfile.mkstemp(dir=folder or ".", prefix=name + ".tmp.")
    except OSError as e:
        raise refused(path, f"cannot create a temporary file beside it: {e.strerror}") from None
    try:
        umask = os.umask(0o022)  # read by setting it, then put back: mkstemp made the file 0600, open()
        os.umask(umask)          # would have made it 0666 less the umask, as seqgrad's files are
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException as e:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise refused(path, f"cannot write it: {e.strerror or e}; the file that was there is unchanged") from None
        raise


def parse_json(text, path, what):
    """The JSON value in `text` (bytes or str), `what` named in a refusal ("its header"). Stricter
    than json.loads, as seqgrad's reader (io/json.cpp) is: UTF-8 only, no NaN or Infinity, no key
    twice in one object; and nesting too deep for Python's parser is refused, not a crash."""
    def once(pairs):
        keys = set()
        for key, _ in pairs:
            if key in keys:
                raise ValueError(f"the key {shown(key)} appears twice in one object")
            keys.add(key)
        return dict(pairs)

    def no_constant(name):
        raise ValueError(f"{name} is not a JSON value")
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text, object_pairs_hook=once, parse_constant=no_constant)
    except UnicodeDecodeError as e:
        raise refused(path, f"expected {what} in UTF-8, found byte 0x{e.object[e.start]:02x} at offset {e.start}") from None
    except RecursionError:
        raise refused(path, f"expected {what} to be JSON nested at most a few hundred deep, found deeper") from None
    except ValueError as e:  # json.JSONDecodeError too, and a number of thousands of digits
        raise refused(path, f"expected {what} to be JSON, found text that is not ({e})") from None


def text_problem(line):
    """What is wrong with a line of bytes as a line of text, or None: as data/corpus.cpp's
    text_line_problem, it must be UTF-8 and hold no control character but the tab."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"expected UTF-8 text, found byte 0x{line[e.start]:02x} at column {e.start + 1}"
    for column, byte in enumerate(line, start=1):
        if (byte < 0x20 and byte != 0x09) or byte == 0x7F:
            return f"expected text, found control character 0x{byte:02x} at column {column}"
    return None


# ================================================================================================
# The checkpoint file: safetensors (io/safetensors.h)
#
#   8 bytes: N, the header's length | N bytes: JSON header, names -> dtype, shape, byte range,
#   and "__metadata__" -> strings | the data: every tensor's little-endian float32 values

MAX_HEADER = 100_000_000  # the longest header read, as io/safetensors.cpp (real ones are kilobytes)


def sizes(value):
    """Is value a JSON list of non-negative whole numbers (a shape, or data_offsets)?"""
    return isinstance(value, list) and all(type(v) is int and v >= 0 for v in value)


def tensor_entry(path, name, entry, data_size):
    """(begin, end, shape) of one tensor's header entry, checked as io/safetensors.cpp checks it:
    float32, a shape of sizes, and a byte range inside the data that holds exactly that shape."""
    who = f"tensor {quoted(name)}"
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        raise refused(path, f"expected {who} to be an object with dtype, shape and data_offsets, found {shown(entry)}")
    if entry["dtype"] != "F32":
        raise refused(path, f"expected {who} to be F32, as seqgrad writes, found {shown(entry['dtype'])}")
    shape, offsets = entry["shape"], entry["data_offsets"]
    if not sizes(shape):
        raise refused(path, f"expected the shape of {who} to be a list of non-negative integers, found {shown(shape)}")
    if not (sizes(offsets) and len(offsets) == 2 and offsets[0] <= offsets[1] <= data_size):
        raise refused(path, f"expected the data_offsets of {who} to be [begin, end] with begin <= end <= {data_size} "
                            f"(the bytes of data in the file), found {shown(offsets)}")
    # The shape's bytes, counted only up to the data's size: crafted sizes can multiply to a
    # number of millions of digits.
    count, fits = 0 if 0 in shape else 1, True
    for size in shape:
        count *= size
        if 4 * count > data_size:
            fits = False
            break
    begin, end = offsets
    if not fits or 4 * count != end - begin:
        needs = 4 * count if fits else f"more than {data_size}"
        raise refused(path, f"expected the data_offsets of {who} to hold the {needs} bytes of its shape {shown(shape)}, "
                            f"found {end - begin} bytes")
    return begin, end, shape


def read_safetensors(path):
    """The tensors and the metadata of a .safetensors file. Every length and offset in it is
    checked against the file before it is used, as io/safetensors.cpp does: the header's length,
    the header (a JSON object), each tensor's entry, and the tensors' byte ranges, which must tile
    the data exactly, with no gap and no overlap."""
    blob = read_file(path)
    if len(blob) < 8:
        raise refused(path, f"expected at least 8 bytes (the header's length), found {len(blob)}")
    (header_size,) = struct.unpack("<Q", blob[:8])
    longest = min(len(blob) - 8, MAX_HEADER)
    if header_size > longest:
        raise refused(path, f"expected a header of at most {longest} bytes, found a length of {header_size}")
    header = parse_json(blob[8:8 + header_size], path, "its header")
    if not isinstance(header, dict):
        raise refused(path, f"expected its header to be a JSON object, found {json_type(header)}")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise refused(path, f"expected its __metadata__ to be an object of strings, found {shown(metadata)}")
    data = memoryview(blob)[8 + header_size:]
    entries = {name: tensor_entry(path, name, entry, len(data)) for name, entry in header.items()}
    covered = 0  # in offset order, each tensor begins where the one before ends
    for name, (begin, end, _) in sorted(entries.items(), key=lambda item: item[1][:2]):
        if begin != covered:
            raise refused(path, f"expected tensor {quoted(name)} to begin at byte {covered} of the data, where the one "
                                f"before ends, found {begin} ({'an overlap' if begin < covered else 'a gap'})")
        covered = end
    if covered != len(data):
        raise refused(path, f"expected the tensors to fill the {len(data)} bytes of data, found {len(data) - covered} "
                            f"bytes that belong to none")
    tensors = {}
    for name, (begin, end, shape) in entries.items():
        values = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32) if end > begin else torch.zeros(0)
        tensors[name] = values.reshape(shape)
    return tensors, metadata


def write_safetensors(path, tensors, metadata):
    """The same format back: the header padded with spaces to a multiple of 8 bytes, as seqgrad
    writes it, then the tensors back to back in the header's order; written all or nothing."""
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        raw = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    write_file(path, struct.pack("<Q", len(text)) + text + b"".join(chunks))


# ================================================================================================
# Tokenizers: text -> ids and ids -> text, one side at a time (data/tokenizer.h's registry)

WHITE_SPACE = re.compile("[ \t\n\r\f\v]+")  # data/tokenizer.cpp's split_whitespace: these six only
WORD_START = "\u2581"  # ▁, the mark bpe pieces carry at a word's start (data/bpe.h)
BPE_WORDS = re.compile("[ \t\n\r\f\v\u2581]+")  # bpe splits words there: a ▁ in the text is a space


class Bpe:
    """Byte-pair encoding from a checkpoint's merges ("left right", in the order learned), as
    data/bpe.cpp encodes and decodes: each word's characters, the first marked ▁, then the
    learned pair that ranks first is merged everywhere in the word, left to right, until no
    adjacent pair is a learned one."""

    def __init__(self, merges):
        self.rank = {tuple(m.split(" ")): r for r, m in enumerate(merges)}  # (left, right) -> rank

    # [docs:bpe_word]
    def encode_word(self, word):
        symbols = [WORD_START + word[0]] + list(word[1:])  # "low" -> ▁l o w
        while len(symbols) > 1:
            pairs = list(zip(symbols, symbols[1:]))
            best = min(pairs, key=lambda pair: self.rank.get(pair, math.inf))
            if best not in self.rank:
                break
            merged, k = [], 0
            while k < len(symbols):  # every occurrence of the pair, left to right: "a a a" -> "aa a"
                if k + 1 < len(symbols) and (symbols[k], symbols[k + 1]) == best:
                    merged.append(symbols[k] + symbols[k + 1])
                    k += 2
                else:
                    merged.append(symbols[k])
                    k += 1
            symbols = merged
        return symbols
    # [docs:end]

    def encode(self, text):
        return [piece for word in BPE_WORDS.split(text) if word for piece in self.encode_word(word)]

    @staticmethod
    def decode(pieces):
        """Pieces joined, each ▁ a space except before the first word: ▁bil ly ▁ate -> "billy ate"."""
        text = ""
        for ch in "".join(pieces):
            if ch != WORD_START:
                text += ch
            elif text:
                text += " "
        return text


class Side:
    """One side of the model: its tokenizer ("space", "char" or "bpe"), its vocabulary (a list,
    id i is token i) and, for bpe, its merges."""

    def __init__(self, kind, vocab, merges=None):
        self.kind, self.vocab = kind, vocab
        self.ids = {token: i for i, token in enumerate(vocab)}
        self.bpe = Bpe(merges) if kind == "bpe" else None

    def tokens(self, text):
        if self.kind == "bpe":
            return self.bpe.encode(text)
        return list(text) if self.kind == "char" else [w for w in WHITE_SPACE.split(text) if w]

    def encode(self, text, max_len):
        """The ids of the first max_len tokens, a token the vocabulary lacks as <unk>: a source as
        seqgrad reads it (one with no tokens at all is empty here: compare() leaves it
        untranslated, as seqgrad translate does, and train_pytorch.py reads it as one <unk>), and
        a training target as seqgrad train cuts it."""
        return [self.ids.get(t, UNK) for t in self.tokens(text)[:max_len]]

    def decode(self, ids):
        """ids -> text: stop at <eos>, skip <pad> and <bos>, then join as the tokenizer split."""
        tokens = []
        for i in ids:
            if i == EOS:
                break
            if i not in (PAD, BOS):
                tokens.append(self.vocab[i])
        if self.kind == "bpe":
            return Bpe.decode(tokens)
        return ("" if self.kind == "char" else " ").join(tokens)


# ================================================================================================
# The model: seqgrad's nn::Transformer in torch.nn modules


class SinusoidalPositions(nn.Module):
    """positional "sinusoidal": the saved (max_len + 2, C) table of sines and cosines, a buffer."""

    def __init__(self, positions, d_model):
        super().__init__()
        self.register_buffer("pe", torch.zeros(positions, d_model))

    def forward(self, x):  # x (B, L, C) -> x + PE[0 .. L)
        return x + self.pe[: x.size(1)]


class LearnedPositions(nn.Module):
    """positional "learned": a trained (max_len + 2, C) table, a parameter."""

    def __init__(self, positions, d_model):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(positions, d_model))

    def forward(self, x):  # x (B, L, C) -> x + W[0 .. L)
        return x + self.weight[: x.size(1)]


POSITIONS = {"sinusoidal": SinusoidalPositions, "learned": LearnedPositions}
# Every key `seqgrad train --arch transformer` writes into seqgrad.config, and so the whole of
# what a checkpoint can ask of the model. Each is mapped below; anything else is refused by name
# (a Transformer always has ReLU and a LayerNorm closing each stack in seqgrad's tool, and so
# here: nn/transformer/transformer.cpp's build_transformer).
MAPPED = {"model", "layers", "dim", "heads", "ffn", "dropout", "positional", "max_len", "src_tokens", "tgt_tokens"}
# Switches a checkpoint written before they existed lacks: then off (post-norm layers, an output
# projection of its own), as seqgrad reads such a file.
SWITCHES = {"pre_norm", "tie_embeddings"}
# The ranges seqgrad train takes them in (nn/decoding/model_kind.cpp, transformer.cpp's options,
# translator.h's kMaxDecode): a value outside was edited or damaged, and must build nothing.
WHOLE = {"layers": (1, 12), "dim": (1, 4096), "heads": (1, 64), "ffn": (1, 16384), "max_len": (1, 4096)}
DROPOUT = (0, 0.9)


def check_config(config, path):
    """Refuses, naming it, whatever in the configuration this script does not map, and any value
    seqgrad train would not have written (checked as translator.cpp's ModelConfig::from_json)."""
    def refuse(what):
        raise refused(path, f"{what}; this script maps only what it names in MAPPED, SWITCHES and POSITIONS")
    if not isinstance(config, dict):
        raise refused(path, f"expected its seqgrad.config to be a JSON object, found {json_type(config)}")
    if config.get("model") != "transformer":
        refuse(f"the model is {quoted(config.get('model'))}, not 'transformer'")
    for key in sorted(set(config) - MAPPED - SWITCHES):
        refuse(f"its configuration sets {quoted(key)} = {shown(config[key])}, which is not mapped to PyTorch")
    for key in sorted(MAPPED - set(config)):
        raise refused(path, f"expected its configuration to set '{key}', found no '{key}'")
    for key, (low, high) in WHOLE.items():
        if type(config[key]) is not int or not low <= config[key] <= high:
            raise refused(path, f"expected its configuration's '{key}' to be a whole number from {low} to {high}, "
                                f"found {shown(config[key])}")
    for key in sorted(SWITCHES):
        if type(config.setdefault(key, False)) is not bool:
            raise refused(path, f"expected its configuration's {quoted(key)} to be true or false, found {shown(config[key])}")
    p = config["dropout"]
    if type(p) not in (int, float) or not DROPOUT[0] <= p <= DROPOUT[1]:
        raise refused(path, f"expected its configuration's 'dropout' to be a number from {DROPOUT[0]} to {DROPOUT[1]}, "
                            f"found {shown(p)}")
    if config["dim"] % config["heads"] != 0:
        raise refused(path, f"expected its configuration's 'dim' to be a multiple of 'heads', found dim {config['dim']} "
                            f"and heads {config['heads']}")
    if not isinstance(config["positional"], str) or config["positional"] not in POSITIONS:
        refuse(f"positional encoding {quoted(config['positional'])} is not mapped (mapped: {', '.join(POSITIONS)})")
    for key in ("src_tokens", "tgt_tokens"):
        if config[key] not in ("space", "char", "bpe"):
            refuse(f"{key} {quoted(config[key])} is not mapped (mapped: space, char, bpe)")


def floats_described(config, src_vocab, tgt_vocab):
    """How many floats the model that `config` describes holds, counted from torch's layers."""
    C, F, L = config["dim"], config["ffn"], config["layers"]
    attention, norm = 4 * C * C + 4 * C, 2 * C     # in_proj (3C, C) + (3C), out_proj (C, C) + (C); weight + bias
    feed_forward = (F * C + F) + (C * F + C)       # linear1, linear2
    encoder_layer = attention + feed_forward + 2 * norm
    decoder_layer = 2 * attention + feed_forward + 3 * norm  # self-attention and attention to the source
    tables = (src_vocab + tgt_vocab + config["max_len"] + 2) * C  # embeddings and positions
    generator = (0 if config["tie_embeddings"] else tgt_vocab * C) + tgt_vocab
    return L * (encoder_layer + decoder_layer) + 2 * norm + tables + generator  # (+ each stack's final norm)


class Translator(nn.Module):
    """Embeddings * sqrt(C) + positions, torch's encoder and decoder stacks (post-norm, or
    pre-norm with norm_first; ReLU, dropout where seqgrad has it, a final LayerNorm each), and the
    generator to the vocabulary, whose weight is the target table when tied. The attribute names
    are the checkpoint's names; a tied weight is saved once, as tgt_embed.weight."""

    def __init__(self, config, src_vocab, tgt_vocab, positions):
        super().__init__()
        C, heads, ffn, layers, p = config["dim"], config["heads"], config["ffn"], config["layers"], config["dropout"]
        self.d_model, self.p = C, p
        self.src_embed = nn.Embedding(src_vocab, C, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(tgt_vocab, C, padding_idx=PAD)
        self.pos_encoding = POSITIONS[config["positional"]](positions, C)
        pre_norm = config["pre_norm"]
        encoder_layer = nn.TransformerEncoderLayer(C, heads, ffn, dropout=p, batch_first=True, norm_first=pre_norm)
        decoder_layer = nn.TransformerDecoderLayer(C, heads, ffn, dropout=p, batch_first=True, norm_first=pre_norm)
        self.encoder = nn.TransformerEncoder(encoder_layer, layers, norm=nn.LayerNorm(C), enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(decoder_layer, layers, norm=nn.LayerNorm(C))
        self.generator = nn.Linear(C, tgt_vocab)
        self.tied = config["tie_embeddings"]
        if self.tied:
            self.generator.weight = self.tgt_embed.weight  # one (V, C) parameter, as seqgrad's

    def state_dict(self, *args, **kwargs):
        """torch's, less generator.weight when it is tgt_embed.weight: seqgrad saves a tied weight once."""
        state = super().state_dict(*args, **kwargs)
        if self.tied:
            prefix = kwargs.get("prefix", args[1] if len(args) > 1 else "")
            del state[prefix + "generator.weight"]
        return state

    def load_state_dict(self, state, strict=True):
        if self.tied:  # the tied weight is loaded once, through tgt_embed.weight
            state = dict(state, **{"generator.weight": state["tgt_embed.weight"]})
        return super().load_state_dict(state, strict)

    def embed(self, table, ids):  # ids (B, L) -> (B, L, C)
        x = self.pos_encoding(table(ids) * math.sqrt(self.d_model))
        return nn.functional.dropout(x, self.p, self.training)

    # [docs:forward]
    def forward(self, src, src_lengths, tgt_in, tgt_lengths=None):
        """src (B, S), tgt_in (B, T) = <bos> y1 .. -> logits (B, T, V). Lengths (B) mark the
        padding after each sentence, which no attention may read (True in a mask = hidden)."""
        S, T = src.size(1), tgt_in.size(1)
        src_padding = torch.arange(S)[None, :] >= src_lengths[:, None]                  # (B, S)
        tgt_padding = None if tgt_lengths is None else torch.arange(T)[None, :] >= tgt_lengths[:, None]  # (B, T)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)             # (T, T)
        memory = self.encoder(self.embed(self.src_embed, src), src_key_padding_mask=src_padding)  # (B, S, C)
        y = self.decoder(self.embed(self.tgt_embed, tgt_in), memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt_padding, memory_key_padding_mask=src_padding)  # (B, T, C)
        return self.generator(y)
    # [docs:end]


# ================================================================================================
# Loading and saving


def string_list(metadata, key, path):
    """The JSON list of strings in the metadata entry `key` (a vocabulary, or bpe merges)."""
    if key not in metadata:
        raise refused(path, f"expected {key} in its metadata, found none")
    items = parse_json(metadata[key], path, key)
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise refused(path, f"expected its {key} to be a JSON list of strings, found {shown(items)}")
    return items


def read_side(metadata, kind, side, path):
    """Side `side` ("src" or "tgt") of the checkpoint, checked as seqgrad checks it: a vocabulary
    that starts with the four special tokens and holds no token twice (data/vocab.cpp), and for
    bpe the merges, each two symbols separated by one space, ▁ only at the start of the first, none
    twice (data/bpe.cpp)."""
    key = f"seqgrad.{side}_vocab"
    vocab = string_list(metadata, key, path)
    if vocab[:4] != SPECIALS:
        raise refused(path, f"expected its {key} to start with {', '.join(SPECIALS)}, found {shown(vocab[:4])}")
    seen = set()
    for token in vocab:
        if token in seen:
            raise refused(path, f"expected each token once in its {key}, found {quoted(token)} twice")
        seen.add(token)
    merges = None
    if kind == "bpe":
        key = f"seqgrad.{side}_bpe"
        merges = string_list(metadata, key, path)
        for rank, merge in enumerate(merges, start=1):
            symbols = merge.split(" ")
            if len(symbols) != 2 or not all(symbols) or WHITE_SPACE.search("".join(symbols)) or WORD_START in merge[1:]:
                raise refused(path, f"expected merge {rank} of its {key} to be two symbols separated by one space, "
                                    f"▁ only at the start of the first, as 'e s'; found {shown(merge)}")
        if len(set(merges)) != len(merges):
            raise refused(path, f"expected each merge once in its {key}, found one twice")
    return Side(kind, vocab, merges)


def load_checkpoint(path):
    """(model, source side, target side, configuration, metadata) of a seqgrad checkpoint. A
    resume file's optimizer buffers are skipped, as seqgrad translate skips them. Everything is
    checked before it is used: the file (read_safetensors), the configuration, the sides, and
    that the model the configuration describes is not far larger than the file's tensors (building
    a crafted one could take all the memory there is) and has exactly their names and shapes."""
    tensors, metadata = read_safetensors(path)
    if metadata.get("seqgrad.format") != FORMAT:
        raise refused(path, f"expected a seqgrad translation model (seqgrad.format = {FORMAT} in its metadata), "
                            f"found {quoted(metadata['seqgrad.format']) if 'seqgrad.format' in metadata else 'none'}")
    if "seqgrad.config" not in metadata:
        raise refused(path, "expected seqgrad.config in its metadata, found none")
    config = parse_json(metadata["seqgrad.config"], path, "its seqgrad.config")
    check_config(config, path)
    tensors = {name: t for name, t in tensors.items() if not name.startswith("optimizer.")}
    sides = [read_side(metadata, config[f"{side}_tokens"], side, path) for side in ("src", "tgt")]
    # A model far larger than the file's tensors cannot match them, and building it could take all
    # the memory there is: as translator.cpp, at most twice the file's floats (for the
    # initialisers' temporaries) and 16M more (64 MB) are built; strict checks below do the rest.
    described = floats_described(config, len(sides[0].vocab), len(sides[1].vocab))
    held = sum(t.numel() for t in tensors.values())
    if described > 2 * held + 2**24:
        raise refused(path, f"expected a configuration that describes at most {2 * held + 2**24} floats (the file holds "
                            f"{held}), found one that describes {described}: {shown(config, 200)}")
    # The tables have max_len + 2 rows, for <bos> and <eos> (transformer.cpp's build_transformer).
    model = Translator(config, len(sides[0].vocab), len(sides[1].vocab), config["max_len"] + 2)
    wanted = model.state_dict()
    missing, extra = [n for n in wanted if n not in tensors], [n for n in tensors if n not in wanted]
    if missing:
        raise refused(path, f"expected tensor {quoted(missing[0])}, found no such tensor ({len(missing)} of the model's "
                            f"{len(wanted)} missing)")
    if extra:
        raise refused(path, f"expected only the model's {len(wanted)} tensors, found {quoted(extra[0])} too")
    for name, t in wanted.items():
        if tensors[name].shape != t.shape:
            raise refused(path, f"expected tensor {quoted(name)} of shape {list(t.shape)}, as its configuration says, "
                                f"found {list(tensors[name].shape)}")
    model.load_state_dict(tensors, strict=True)  # every name and shape matches (checked above)
    model.eval()
    return model, sides[0], sides[1], config, metadata


def save_checkpoint(model, path, metadata):
    """The model's tensors under their own names, with the metadata it was loaded with: a
    checkpoint that seqgrad translate and eval read as one of their own."""
    write_safetensors(path, model.state_dict(), metadata)


# ================================================================================================
# Greedy decoding and the comparison with seqgrad


def greedy(model, sources, max_len):
    """The most likely token at every step, as seqgrad's greedy_decode, for a batch of sources
    (lists of ids): each one's output ids (up to its <eos>) and log P(output [+ <eos>] | source),
    summed from float32 log-softmaxes. The whole prefix is run again at every step (no cache), and
    a finished sentence runs along with the others, its later tokens not counted."""
    B = len(sources)
    src = torch.full((B, max(len(s) for s in sources)), PAD)
    for b, s in enumerate(sources):
        src[b, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([len(s) for s in sources])
    out = torch.full((B, 1), BOS)                                   # (B, t): <bos> and the tokens so far
    log_prob = torch.zeros(B, dtype=torch.float64)
    done = torch.zeros(B, dtype=torch.bool)
    with torch.no_grad():
        for _ in range(max_len):
            log_probs = torch.log_softmax(model(src, lengths, out)[:, -1], dim=-1)  # (B, V)
            token = torch.argmax(log_probs, dim=-1)                                  # (B)
            chosen = log_probs.gather(1, token[:, None])[:, 0].double()
            log_prob += torch.where(done, torch.zeros_like(chosen), chosen)
            out = torch.cat([out, token[:, None]], dim=1)
            done |= token == EOS
            if done.all():
                break
    return [row[1:].tolist() for row in out], log_prob.tolist()


BYTE_ORDER_MARK = "\ufeff".encode("utf-8")


def read_tsv(path):
    """(source, target) pairs of a file seqgrad train --train or eval --data reads, checked line
    by line as data/corpus.cpp checks them: one source<TAB>target per line, UTF-8 text with no
    control character but the tab; blank lines skipped, byte-order marks and Windows line ends
    taken off. A file with no pairs at all is refused too."""
    pairs = []
    for number, line in enumerate(read_file(path).split(b"\n"), start=1):
        while line.startswith(BYTE_ORDER_MARK):
            line = line[len(BYTE_ORDER_MARK):]
        line = line.rstrip(b"\r")
        if not line.strip(b" \t"):
            continue
        problem = text_problem(line)
        if problem:
            raise refused(path, f"line {number}: {problem}")
        fields = line.decode("utf-8").split("\t")
        if len(fields) != 2:
            raise refused(path, f"line {number}: expected 'source<TAB>target', found "
                                f"{'no tab' if len(fields) == 1 else f'{len(fields) - 1} tabs'}")
        pairs.append((fields[0], fields[1]))
    if not pairs:
        raise refused(path, "expected lines of 'source<TAB>target', found no sentence pairs")
    return pairs


def seqgrad_translate(seqgrad, model_path, sentences):
    """(log-probability, translation) of each sentence, from `seqgrad translate --scores`: the
    sentences go in one a line on standard input. A sentence with no tokens is not translated:
    its line comes back empty, read here as (None, "")."""
    try:
        run = subprocess.run([seqgrad, "translate", "--model", model_path, "--scores"],
                             input="".join(s + "\n" for s in sentences), capture_output=True,
                             encoding="utf-8", errors="replace")
    except OSError as e:
        raise refused(seqgrad, f"expected the seqgrad tool, found none that runs ({e.strerror})") from None
    if run.returncode != 0:
        said = " / ".join(line for line in run.stderr.splitlines() if line.strip()) or "nothing on stderr"
        raise refused(seqgrad, f"translate failed (status {run.returncode}): {said}")
    lines, scores = run.stdout.split("\n")[: len(sentences)], []
    for number, line in enumerate(lines, start=1):
        if line == "":
            scores.append((None, ""))
            continue
        score, tab, text = line.partition("\t")
        try:
            value = float(score) if tab else None
        except ValueError:
            value = None
        if value is None:
            raise refused(seqgrad, f"expected translate --scores to print 'log-probability<TAB>translation' for each of "
                                   f"the {len(sentences)} sentences, found {shown(line)} on line {number}")
        scores.append((value, text))
    if len(scores) != len(sentences):
        raise refused(seqgrad, f"expected translate --scores to print {len(sentences)} lines, found {len(scores)}")
    return scores


def score_text(log_prob):
    """A log-probability as printed, or "(none)" for a sentence not translated."""
    return "(none)" if log_prob is None else f"{log_prob:.6f}"


def check_flags(args):
    """The number flags in their ranges (argparse has refused what is not a number at all): a NaN
    tolerance would let every difference pass."""
    if not (math.isfinite(args.tolerance) and args.tolerance >= 0):
        raise Refused(f"--tolerance: expected a number of at least 0, found {args.tolerance}")
    if args.show < 0:
        raise Refused(f"--show: expected a whole number of at least 0, found {args.show}")


def compare(args, parser):
    """The work of main: load, translate with both, compare."""
    check_flags(args)
    for number, sentence in enumerate(args.sentences, start=1):
        problem = text_problem(os.fsencode(sentence))  # the bytes given, as seqgrad translate reads them
        if problem:
            raise Refused(f"sentence {number}: {problem}")
    sentences = args.sentences + ([source for source, _ in read_tsv(args.data)] if args.data else [])
    if not sentences:
        parser.error("give sentences, or --data FILE")

    model, src, tgt, config, _ = load_checkpoint(args.model)
    print(f"loaded {len(model.state_dict())} tensors into torch modules, strictly by name "
          f"({sum(p.numel() for p in model.parameters())} parameters; sides {src.kind} -> {tgt.kind}, "
          f"positional {config['positional']})")
    theirs = seqgrad_translate(args.seqgrad, args.model, sentences)
    # A sentence with no tokens is not translated, here as in seqgrad translate: a model asked
    # to translate nothing would make something up. It is an empty line, with no log-probability.
    sources = [src.encode(s, config["max_len"]) for s in sentences]
    translated = [k for k, ids in enumerate(sources) if ids]
    outputs, log_probs = greedy(model, [sources[k] for k in translated], config["max_len"]) if translated else ([], [])
    ours = [("", None)] * len(sentences)
    for k, output, log_prob in zip(translated, outputs, log_probs):
        ours[k] = (tgt.decode(output), log_prob)
    worst, same = 0.0, 0
    for k, (sentence, (text, log_prob), (their_score, their_text)) in enumerate(zip(sentences, ours, theirs)):
        if log_prob is None or their_score is None:  # no score is only the same as no score
            diff = 0.0 if log_prob is None and their_score is None else math.inf
        else:
            diff = abs(log_prob - their_score)
        worst = max(worst, diff)
        same += text == their_text
        if k < args.show or text != their_text or diff > args.tolerance:
            print(f"{sentence!r}: torch {text!r} {score_text(log_prob)} | seqgrad {their_text!r} "
                  f"{score_text(their_score)} | difference {diff:.2e}")
    print(f"same translation for {same} of {len(sentences)} sentences; largest log-probability difference {worst:.2e}")
    if same != len(sentences) or worst > args.tolerance:
        sys.exit(f"to_pytorch: PyTorch and seqgrad disagree (translations or log-probabilities beyond {args.tolerance:g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a checkpoint written by `seqgrad train --arch transformer`")
    parser.add_argument("sentences", nargs="*", help="source sentences to translate with both")
    parser.add_argument("--data", help="a TSV file of source<TAB>reference lines: its sources are translated")
    parser.add_argument("--seqgrad", default="build/seqgrad", help="the seqgrad tool to compare with (default build/seqgrad)")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="largest log-probability difference allowed (1e-4)")
    parser.add_argument("--show", type=int, default=3, help="sentences to print (every differing one is printed too)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        compare(args, parser)
    except Refused as e:
        print(f"to_pytorch: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
