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

What this is not: beam search, or the recurrent models (their attention decoders are seqgrad's
own composition). docs/train_pytorch.py goes on training the model in PyTorch and writes it back
with save_checkpoint. Needs PyTorch (Debian: python3-torch); tests/examples/to_pytorch.sh runs
both whenever it is installed. Chapter 15 (docs/15-where-next.md) walks through them.
"""
import argparse
import json
import math
import re
import struct
import subprocess
import sys

import torch
from torch import nn

PAD, BOS, EOS, UNK = 0, 1, 2, 3  # the special tokens' ids in every vocabulary (io/special_tokens.h)
FORMAT = "seqgrad-translator-1"  # examples/seqgrad/translator.cpp's kFormat

# ================================================================================================
# The checkpoint file: safetensors (io/safetensors.h)
#
#   8 bytes: N, the header's length | N bytes: JSON header, names -> dtype, shape, byte range,
#   and "__metadata__" -> strings | the data: every tensor's little-endian float32 values


def read_safetensors(path):
    """The tensors and the metadata of a .safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_size])
    metadata = header.pop("__metadata__", {})
    data = blob[8 + header_size:]
    tensors = {}
    for name, entry in header.items():
        if entry["dtype"] != "F32":
            sys.exit(f"to_pytorch: '{path}': tensor '{name}' is {entry['dtype']}; expected F32, as seqgrad writes")
        begin, end = entry["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32).reshape(entry["shape"])
    return tensors, metadata


def write_safetensors(path, tensors, metadata):
    """The same format back: the header padded with spaces to a multiple of 8 bytes, as seqgrad
    writes it, then the tensors back to back in the header's order."""
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        raw = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


# ================================================================================================
# Tokenizers: text -> ids and ids -> text, one side at a time (translator.cpp's tokenize_side)

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
        seqgrad reads it (one with no tokens at all the callers read as one <unk>), and a training
        target as seqgrad train cuts it."""
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
# Every key `seqgrad train --model transformer` writes into seqgrad.config, and so the whole of
# what a checkpoint can ask of the model. Each is mapped below; anything else is refused by name
# (a Transformer always has ReLU, post-norm layers and a LayerNorm closing each stack in seqgrad's
# tool, and so here: nn/transformer/transformer.cpp's build_transformer).
MAPPED = {"model", "layers", "dim", "heads", "ffn", "dropout", "positional", "max_len", "src_tokens", "tgt_tokens"}


def check_config(config, path):
    """Refuses, naming it, whatever in the configuration this script does not map."""
    def refuse(what):
        sys.exit(f"to_pytorch: '{path}': {what}; this script maps only what it names in MAPPED and POSITIONS")
    if config.get("model") != "transformer":
        refuse(f"the model is '{config.get('model')}', not 'transformer'")
    for key in sorted(set(config) - MAPPED):
        refuse(f"its configuration sets '{key}' = {json.dumps(config[key])}, which is not mapped to PyTorch")
    if config["positional"] not in POSITIONS:
        refuse(f"positional encoding '{config['positional']}' is not mapped (mapped: {', '.join(POSITIONS)})")
    for key in ("src_tokens", "tgt_tokens"):
        if config[key] not in ("space", "char", "bpe"):
            refuse(f"{key} '{config[key]}' is not mapped (mapped: space, char, bpe)")


class Translator(nn.Module):
    """Embeddings * sqrt(C) + positions, torch's encoder and decoder stacks (post-norm, ReLU,
    dropout where seqgrad has it, a final LayerNorm each), and the generator to the vocabulary.
    The attribute names are the checkpoint's names."""

    def __init__(self, config, src_vocab, tgt_vocab, positions):
        super().__init__()
        C, heads, ffn, layers, p = config["dim"], config["heads"], config["ffn"], config["layers"], config["dropout"]
        self.d_model, self.p = C, p
        self.src_embed = nn.Embedding(src_vocab, C, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(tgt_vocab, C, padding_idx=PAD)
        self.pos_encoding = POSITIONS[config["positional"]](positions, C)
        encoder_layer = nn.TransformerEncoderLayer(C, heads, ffn, dropout=p, batch_first=True)
        decoder_layer = nn.TransformerDecoderLayer(C, heads, ffn, dropout=p, batch_first=True)
        self.encoder = nn.TransformerEncoder(encoder_layer, layers, norm=nn.LayerNorm(C), enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(decoder_layer, layers, norm=nn.LayerNorm(C))
        self.generator = nn.Linear(C, tgt_vocab)

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


def load_checkpoint(path):
    """(model, source side, target side, configuration, metadata) of a seqgrad checkpoint. A
    resume file's optimizer buffers are skipped, as seqgrad translate skips them."""
    tensors, metadata = read_safetensors(path)
    if metadata.get("seqgrad.format") != FORMAT:
        sys.exit(f"to_pytorch: '{path}' is not a seqgrad translation model (no seqgrad.format = {FORMAT})")
    config = json.loads(metadata["seqgrad.config"])
    check_config(config, path)
    tensors = {name: t for name, t in tensors.items() if not name.startswith("optimizer.")}
    sides = []
    for side in ("src", "tgt"):
        kind = config[f"{side}_tokens"]
        merges = json.loads(metadata[f"seqgrad.{side}_bpe"]) if kind == "bpe" else None
        sides.append(Side(kind, json.loads(metadata[f"seqgrad.{side}_vocab"]), merges))
    table = tensors.get("pos_encoding.pe", tensors.get("pos_encoding.weight"))
    model = Translator(config, len(sides[0].vocab), len(sides[1].vocab), table.shape[0])
    model.load_state_dict(tensors, strict=True)  # every name matches, or this raises
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


def read_tsv(path):
    """(source, target) pairs of a file seqgrad train --train or eval --data reads: one
    source<TAB>target per line; blank lines skipped, Windows line ends taken off."""
    pairs = []
    with open(path, encoding="utf-8", newline="") as f:
        for number, line in enumerate(f.read().split("\n"), start=1):
            line = line.lstrip("\ufeff").rstrip("\r")
            if not line.strip(" \t"):
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                sys.exit(f"{path}:{number}: expected 'source<TAB>target', found {len(fields) - 1} tabs")
            pairs.append((fields[0], fields[1]))
    return pairs


def seqgrad_translate(seqgrad, model_path, sentences):
    """(log-probability, translation) of each sentence, from `seqgrad translate --scores`: the
    sentences go in one a line on standard input."""
    run = subprocess.run([seqgrad, "translate", "--model", model_path, "--scores"], input="".join(s + "\n" for s in sentences),
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"to_pytorch: {seqgrad} translate failed: {run.stderr.strip()}")
    lines = run.stdout.split("\n")[: len(sentences)]
    return [(float(score), text) for score, text in (line.split("\t", 1) for line in lines)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a checkpoint written by `seqgrad train --model transformer`")
    parser.add_argument("sentences", nargs="*", help="source sentences to translate with both")
    parser.add_argument("--data", help="a TSV file of source<TAB>reference lines: its sources are translated")
    parser.add_argument("--seqgrad", default="build/seqgrad", help="the seqgrad tool to compare with (default build/seqgrad)")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="largest log-probability difference allowed (1e-4)")
    parser.add_argument("--show", type=int, default=3, help="sentences to print (every differing one is printed too)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    sentences = args.sentences + ([source for source, _ in read_tsv(args.data)] if args.data else [])
    if not sentences:
        parser.error("give sentences, or --data FILE")

    model, src, tgt, config, _ = load_checkpoint(args.model)
    print(f"loaded {len(model.state_dict())} tensors into torch modules, strictly by name "
          f"({sum(p.numel() for p in model.parameters())} parameters; sides {src.kind} -> {tgt.kind}, "
          f"positional {config['positional']})")
    theirs = seqgrad_translate(args.seqgrad, args.model, sentences)
    outputs, log_probs = greedy(model, [src.encode(s, config["max_len"]) or [UNK] for s in sentences], config["max_len"])
    worst, same = 0.0, 0
    for k, (sentence, (their_score, their_text)) in enumerate(zip(sentences, theirs)):
        text, log_prob = tgt.decode(outputs[k]), log_probs[k]
        diff = abs(log_prob - their_score)
        worst = max(worst, diff)
        same += text == their_text
        if k < args.show or text != their_text or diff > args.tolerance:
            print(f"{sentence!r}: torch {text!r} {log_prob:.6f} | seqgrad {their_text!r} {their_score:.6f} "
                  f"| difference {diff:.2e}")
    print(f"same translation for {same} of {len(sentences)} sentences; largest log-probability difference {worst:.2e}")
    if same != len(sentences) or worst > args.tolerance:
        sys.exit(f"to_pytorch: PyTorch and seqgrad disagree (translations or log-probabilities beyond {args.tolerance:g})")


if __name__ == "__main__":
    main()
