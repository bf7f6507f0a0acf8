#!/usr/bin/env python3
"""docs/to_pytorch.py - a seqgrad Transformer checkpoint, loaded into PyTorch's own modules.

seqgrad names its parameters as torch.nn.Transformer does, so the checkpoint loads with
load_state_dict(strict=True): no renaming, nothing left over, nothing missing. The script then
translates each sentence greedily in PyTorch and compares, sentence by sentence, the
translation and its log-probability with what `seqgrad translate --scores` prints for it.

    python3 docs/to_pytorch.py MODEL.safetensors [--seqgrad build/seqgrad] SENTENCE [SENTENCE ...]

Needs Python 3 and PyTorch (Debian: python3-torch); seqgrad's build and tests never run it.
Chapter 15 of the book (docs/15-where-next.md) walks through it.
"""
import argparse
import json
import math
import struct
import subprocess
import sys

import torch
from torch import nn

DTYPES = {"F32": torch.float32, "F64": torch.float64}


def read_safetensors(path):
    """The tensors and the metadata of a .safetensors file (8-byte header size, JSON header, data)."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_size])
    metadata = header.pop("__metadata__", {})
    data = blob[8 + header_size:]
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        flat = torch.frombuffer(bytearray(data[begin:end]), dtype=DTYPES[entry["dtype"]])
        tensors[name] = flat.reshape(entry["shape"])
    return tensors, metadata


class PositionalEncoding(nn.Module):
    """The saved (max_len, C) table of sines and cosines, added to the embeddings."""

    def __init__(self, max_len, d_model):
        super().__init__()
        self.register_buffer("pe", torch.zeros(max_len, d_model))

    def forward(self, x):  # x (B, L, C)
        return x + self.pe[: x.size(1)]


class Translator(nn.Module):
    """seqgrad's nn::Transformer: embeddings * sqrt(C) + positions, torch's encoder and decoder
    stacks (post-norm, ReLU, a final LayerNorm each), and the generator to the vocabulary. The
    attribute names are the checkpoint's names."""

    def __init__(self, config, src_vocab, tgt_vocab, max_positions):
        super().__init__()
        C, heads, ffn, layers = config["dim"], config["heads"], config["ffn"], config["layers"]
        self.d_model = C
        self.src_embed = nn.Embedding(src_vocab, C, padding_idx=0)
        self.tgt_embed = nn.Embedding(tgt_vocab, C, padding_idx=0)
        self.pos_encoding = PositionalEncoding(max_positions, C)
        encoder_layer = nn.TransformerEncoderLayer(C, heads, ffn, dropout=0.0, batch_first=True)
        decoder_layer = nn.TransformerDecoderLayer(C, heads, ffn, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(encoder_layer, layers, norm=nn.LayerNorm(C), enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(decoder_layer, layers, norm=nn.LayerNorm(C))
        self.generator = nn.Linear(C, tgt_vocab)

    def embed(self, table, ids):
        return self.pos_encoding(table(ids) * math.sqrt(self.d_model))

    def forward(self, src, tgt_in):  # (1, S), (1, T) ids -> (1, T, V) logits
        memory = self.encoder(self.embed(self.src_embed, src))
        T = tgt_in.size(1)
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        return self.generator(self.decoder(self.embed(self.tgt_embed, tgt_in), memory, tgt_mask=causal))


def greedy(model, src_ids, max_len, bos=1, eos=2):
    """The argmax at every step, as seqgrad's greedy_decode: the output ids (without <bos> and
    <eos>) and log P(output [+ <eos>] | source)."""
    out, log_prob = [], 0.0
    with torch.no_grad():
        src = torch.tensor([src_ids])
        for _ in range(max_len):
            logits = model(src, torch.tensor([[bos] + out]))[0, -1]
            log_probs = torch.log_softmax(logits.double(), dim=-1)
            token = int(torch.argmax(logits))
            log_prob += float(log_probs[token])
            if token == eos:
                break
            out.append(token)
    return out, log_prob


def tokenize(text, kind):
    return list(text) if kind == "char" else text.split()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a checkpoint written by `seqgrad train --model transformer`")
    parser.add_argument("sentences", nargs="+", help="source sentences to translate with both")
    parser.add_argument("--seqgrad", default="build/seqgrad", help="the seqgrad tool, to compare with (default build/seqgrad)")
    args = parser.parse_args()

    tensors, metadata = read_safetensors(args.model)
    config = json.loads(metadata["seqgrad.config"])
    if config["model"] != "transformer":
        sys.exit(f"to_pytorch: this script maps the Transformer; '{args.model}' holds a {config['model']} model")
    src_vocab = json.loads(metadata["seqgrad.src_vocab"])
    tgt_vocab = json.loads(metadata["seqgrad.tgt_vocab"])
    model = Translator(config, len(src_vocab), len(tgt_vocab), tensors["pos_encoding.pe"].shape[0])
    model.load_state_dict(tensors, strict=True)  # every name matches, or this raises
    model.eval()
    print(f"loaded {len(tensors)} tensors into torch modules, strictly by name "
          f"({sum(p.numel() for p in model.parameters())} parameters)")

    seqgrad_lines = subprocess.run([args.seqgrad, "translate", "--model", args.model, "--scores", *args.sentences],
                                   check=True, capture_output=True, text=True).stdout.splitlines()
    ids = {token: i for i, token in enumerate(src_vocab)}
    worst, same = 0.0, 0
    for sentence, line in zip(args.sentences, seqgrad_lines):
        theirs_score, theirs_text = line.split("\t", 1)
        src_ids = [ids.get(t, 3) for t in tokenize(sentence, config["src_tokens"])][: config["max_len"]] or [3]
        out, log_prob = greedy(model, src_ids, config["max_len"])
        joiner = "" if config["tgt_tokens"] == "char" else " "
        text = joiner.join(tgt_vocab[i] for i in out)
        diff = abs(log_prob - float(theirs_score))
        worst = max(worst, diff)
        same += text == theirs_text
        print(f"{sentence!r}: torch {text!r} {log_prob:.6f} | seqgrad {theirs_text!r} {float(theirs_score):.6f} "
              f"| difference {diff:.2e}")
    print(f"same translation for {same} of {len(args.sentences)} sentences; "
          f"largest log-probability difference {worst:.2e}")


if __name__ == "__main__":
    main()
