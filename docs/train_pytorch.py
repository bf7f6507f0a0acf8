#!/usr/bin/env python3
"""docs/train_pytorch.py - goes on training a seqgrad Transformer in PyTorch, on one process or several.

The model comes from docs/to_pytorch.py (a checkpoint of `seqgrad train --model transformer`,
loaded into torch.nn modules), the sentence pairs from a TSV file as `seqgrad train --train`
reads them, tokenised as the checkpoint's sides are. The training is seqgrad's: cross-entropy
over the real target tokens (padding ignored) with optional label smoothing, Adam with the
Transformer paper's betas (0.9, 0.98) and eps 1e-9, a linear warm-up, gradients clipped to a
global norm of 1, dropout as the checkpoint's configuration says. With --processes P it runs as P
processes with torch.distributed (backend gloo, on this machine): each process takes its share
of every batch (DistributedSampler), and DistributedDataParallel averages the gradients, so
every replica takes the same step. The result is written back as a checkpoint seqgrad reads.

    python3 docs/train_pytorch.py MODEL.safetensors --train PAIRS.tsv [--valid V.tsv] [--steps 100]
        [--batch 64] [--lr 1e-3] [--processes 2] [--out CONTINUED.safetensors]

What this is not: seqgrad's batching by length or its random numbers (the batches and dropout
masks differ, so the losses are not seqgrad's step for step), or more than one machine (for
that, set MASTER_ADDR to a reachable host and start one process per rank there).
tests/examples/to_pytorch.sh runs it; chapter 15 (docs/15-where-next.md) walks through it.
"""
import argparse
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from to_pytorch import BOS, EOS, PAD, UNK, load_checkpoint, read_tsv, save_checkpoint

# ================================================================================================
# Data: sentence pairs as ids, batches padded as seqgrad's data/batch.cpp pads them


def encode_pairs(pairs, src, tgt, max_len):
    """(source ids, target ids) per pair, each side cut to max_len tokens as seqgrad train cuts them."""
    return [(src.encode(s, max_len) or [UNK], tgt.encode(t, max_len)) for s, t in pairs]


def collate(examples):
    """A batch: src (B, S) and tgt_in = <bos> y, tgt_out = y <eos> (B, T), padded with <pad> = 0,
    and the lengths that say where each sentence's padding starts (the target's counts <eos>)."""
    B = len(examples)
    src_lengths = torch.tensor([len(s) for s, _ in examples])
    tgt_lengths = torch.tensor([len(t) + 1 for _, t in examples])
    src = torch.full((B, int(src_lengths.max())), PAD)
    tgt_in = torch.full((B, int(tgt_lengths.max())), PAD)
    tgt_out = torch.full_like(tgt_in, PAD)
    for b, (s, t) in enumerate(examples):
        src[b, : len(s)] = torch.tensor(s)
        tgt_in[b, : len(t) + 1] = torch.tensor([BOS] + t)
        tgt_out[b, : len(t) + 1] = torch.tensor(t + [EOS])
    return src, src_lengths, tgt_in, tgt_out, tgt_lengths


# [docs:loss]
def loss_of(model, batch, label_smoothing=0.0, reduction="mean"):
    """Cross-entropy of every real target token, <pad> ignored (seqgrad's Translator::loss):
    the mean over those tokens, or with reduction="sum" their sum."""
    src, src_lengths, tgt_in, tgt_out, tgt_lengths = batch
    logits = model(src, src_lengths, tgt_in, tgt_lengths)  # (B, T, V)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD,
                                             label_smoothing=label_smoothing, reduction=reduction)
# [docs:end]


def validation_loss(model, examples):
    """The mean loss per target token over a whole file, without dropout or smoothing: seqgrad
    train's valid_loss for a file of up to 64 pairs (which it scores as one batch)."""
    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(examples), 64):
            batch = collate(examples[start:start + 64])
            total += float(loss_of(model, batch, reduction="sum"))
            tokens += int(batch[4].sum())
    model.train()
    return total / tokens


# ================================================================================================
# Training: the same loop for one process and for each of several


def train(rank, world, args):
    """Process `rank` of `world`. With world > 1 it joins the others (gloo), wraps the model in
    DistributedDataParallel and reads only its own share of each epoch's pairs."""
    torch.set_num_threads(1)
    torch.manual_seed(args.seed + rank)  # dropout: each process its own masks
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    say = print if rank == 0 else (lambda *a, **k: None)
    model, src, tgt, config, metadata = load_checkpoint(args.model)
    train_set = encode_pairs(read_tsv(args.train), src, tgt, config["max_len"])
    valid_set = encode_pairs(read_tsv(args.valid), src, tgt, config["max_len"]) if args.valid else None
    say(f"loaded {args.model}: {sum(p.numel() for p in model.parameters())} parameters; {len(train_set)} training "
        f"pairs; " + (f"{world} processes (gloo), {args.batch // world} pairs each per step" if world > 1 else
                      f"1 process, {args.batch} pairs per step"))
    if valid_set:
        say(f"before: valid_loss={validation_loss(model, valid_set):.4f}")

    # [docs:ddp]
    model.train()
    net = DistributedDataParallel(model) if world > 1 else model  # the gradients, averaged over processes
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    batches = DataLoader(train_set, batch_size=args.batch // world, sampler=sampler, collate_fn=collate)
    # [docs:end]
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    warmup = max(1, min(100, args.steps // 10))  # seqgrad train's: 100 steps, or 10% of a short run
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
    step, epoch, recent = 0, 0, []
    while step < args.steps:
        sampler.set_epoch(epoch)  # a new order every epoch, the same in every process
        epoch += 1
        for batch in batches:
            # [docs:train_step]
            loss = loss_of(net, batch, args.label_smoothing)
            optimizer.zero_grad()
            loss.backward()  # with DDP, the gradient is all-reduced here
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            schedule.step()
            # [docs:end]
            step += 1
            recent.append(float(loss))
            if step % args.log_every == 0 or step == args.steps:
                mean = torch.tensor(sum(recent) / len(recent))
                if world > 1:
                    dist.all_reduce(mean)  # the processes' losses, averaged
                    mean /= world
                say(f"step {step}: loss {float(mean):.4f} (mean of the last {len(recent)} steps)")
                recent = []
            if step == args.steps:
                break

    if valid_set:
        say(f"after {step} steps: valid_loss={validation_loss(model, valid_set):.4f}")
    if world > 1:  # DDP's promise: every replica took the same steps
        mine = torch.cat([p.detach().flatten() for p in model.parameters()])
        everyone = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(everyone, mine)
        differ = max(float((other - mine).abs().max()) for other in everyone)
        say(f"replicas: {world} processes, largest parameter difference between them {differ:.1e}")
        dist.destroy_process_group()
    if args.out and rank == 0:
        save_checkpoint(model, args.out, metadata)
        say(f"saved {args.out}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a checkpoint written by `seqgrad train --model transformer`")
    parser.add_argument("--train", required=True, help="a TSV file of source<TAB>target lines to train on")
    parser.add_argument("--valid", help="a TSV file to report the loss on, before and after")
    parser.add_argument("--steps", type=int, default=100, help="optimizer steps (100)")
    parser.add_argument("--batch", type=int, default=64, help="sentence pairs per step, over all processes (64)")
    parser.add_argument("--lr", type=float, default=1e-3, help="learning rate after the warm-up (1e-3)")
    parser.add_argument("--label-smoothing", type=float, default=0.0, help="label smoothing epsilon (0)")
    parser.add_argument("--clip", type=float, default=1.0, help="global gradient norm to clip to (1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the batch order and dropout (0)")
    parser.add_argument("--log-every", type=int, default=10, help="print the mean loss every N steps (10)")
    parser.add_argument("--processes", type=int, default=1, help="processes, with torch.distributed and gloo (1)")
    parser.add_argument("--out", help="write the trained model here, a checkpoint seqgrad reads")
    args = parser.parse_args()
    if args.batch < args.processes:
        parser.error(f"--batch ({args.batch}) must give every one of the {args.processes} processes a pair")
    if args.processes == 1:
        train(0, 1, args)
        return
    # [docs:spawn]
    # One machine: the processes meet at a free port of this one, and each runs train(rank, ...).
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(free_port())
    torch.multiprocessing.spawn(train, args=(args.processes, args), nprocs=args.processes)
    # [docs:end]


if __name__ == "__main__":
    main()
