#!/usr/bin/env python3
"""docs/train_pytorch.py - goes on training a seqgrad Transformer in PyTorch, on one process or several.

The model comes from docs/to_pytorch.py (a checkpoint of `seqgrad train --arch transformer`,
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

Every input is checked before any training, as the seqgrad tool checks its own: a number flag
out of range, a checkpoint or corpus to_pytorch.py refuses, an --out that could not be written
(its folder missing or not writable, a directory, a device or a FIFO, or one of the files read),
each ends with one line on stderr and exit status 2. The result is written all or nothing: a
failed write (a full disk, a file-size limit) leaves the file that was at --out as it was.

tests/examples/to_pytorch.sh runs it, and tests/examples/pytorch_script_faults.sh feeds it bad
input; chapter 15 (docs/15-where-next.md) walks through it.
"""
import argparse
import math
import os
import socket
import stat
import sys
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from to_pytorch import BOS, EOS, PAD, UNK, Refused, file_kind, load_checkpoint, read_tsv, refused, save_checkpoint

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


def load_inputs(args):
    """(model, metadata, training pairs, validation pairs or None), each file checked as it is read."""
    model, src, tgt, config, metadata = load_checkpoint(args.model)
    train_set = encode_pairs(read_tsv(args.train), src, tgt, config["max_len"])
    valid_set = encode_pairs(read_tsv(args.valid), src, tgt, config["max_len"]) if args.valid else None
    return model, metadata, train_set, valid_set


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
    model, metadata, train_set, valid_set = load_inputs(args)
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


# ================================================================================================
# Checks before any work: the flags' ranges, and the output

# Each whole-number flag's range, lowest and highest (None: no highest). The seed's is seqgrad
# train's; more processes than 64 on one machine is a slip of the keyboard.
FLAG_RANGES = {"steps": (1, None), "batch": (1, None), "seed": (0, 2**63 - 1), "log_every": (1, None),
               "processes": (1, 64)}


def check_flags(args):
    """Every number flag in its range (argparse has refused what is not a number at all): out of
    range, most would not fail but quietly do nothing (--processes 0, --steps 0) or nonsense
    (--lr nan)."""
    for name, (low, high) in FLAG_RANGES.items():
        value = getattr(args, name)
        if value < low or (high is not None and value > high):
            expected = f"from {low} to {high}" if high is not None else f"of at least {low}"
            raise Refused(f"--{name.replace('_', '-')}: expected a whole number {expected}, found {value}")
    for name in ("lr", "clip"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise Refused(f"--{name}: expected a number above 0, found {value}")
    if not 0 <= args.label_smoothing < 1:  # (false for a NaN too)
        raise Refused(f"--label-smoothing: expected a number from 0 up to, not including, 1, found {args.label_smoothing}")
    if args.batch < args.processes:
        raise Refused(f"--batch: expected at least one pair for each of the {args.processes} processes, found {args.batch}")


def check_output(path, inputs):
    """Refuses an --out that could not be written, before any training: its folder must exist
    and take a new file, and it must not be a directory, a device or a FIFO, nor any of `inputs`
    (flag, path) that the run reads (writing the model over itself would lose it on a failure)."""
    folder = os.path.dirname(path) or "."
    try:
        folder_mode = os.stat(folder).st_mode
    except OSError as e:
        raise refused(path, f"expected its folder '{folder}' to exist, found none ({e.strerror})") from None
    if not stat.S_ISDIR(folder_mode):
        raise refused(path, f"expected its folder '{folder}' to be a directory, found {file_kind(folder_mode)}")
    try:
        mine = os.stat(path)
    except FileNotFoundError:
        mine = None  # a new name: nothing to compare
    except OSError as e:
        raise refused(path, f"cannot look at it: {e.strerror}") from None
    if mine is not None:
        if not stat.S_ISREG(mine.st_mode):
            raise refused(path, f"expected a regular file or a new name to write, found {file_kind(mine.st_mode)}")
        for flag, other in inputs:
            try:
                theirs = os.stat(other) if other else None
            except OSError:
                continue  # missing: refused when it is read
            if theirs and (theirs.st_dev, theirs.st_ino) == (mine.st_dev, mine.st_ino):
                raise refused(path, f"expected a file other than the {flag} it reads, found the same file")
    try:  # a file made and removed: the only proof the folder takes one (root passes os.access)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path) + ".tmp.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise refused(path, f"cannot create a file in its folder '{folder}': {e.strerror}") from None


def run(args):
    """Checks everything, then trains on one process or several."""
    check_flags(args)
    if args.out:
        check_output(args.out, [("model", args.model), ("--train", args.train), ("--valid", args.valid)])
    if args.processes == 1:
        train(0, 1, args)  # its inputs are checked as it loads them, before it trains
        return
    load_inputs(args)  # checked here, once, so that a bad one is one line, not a failure in each process
    # [docs:spawn]
    # One machine: the processes meet at a free port of this one, and each runs train(rank, ...).
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(free_port())
    torch.multiprocessing.spawn(train, args=(args.processes, args), nprocs=args.processes)
    # [docs:end]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a checkpoint written by `seqgrad train --arch transformer`")
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
    try:
        run(args)
    except Refused as e:
        print(f"train_pytorch: {e}", file=sys.stderr)
        sys.exit(2)
    except (torch.multiprocessing.ProcessRaisedException, torch.multiprocessing.ProcessExitedException) as e:
        # One of several processes failed. Its traceback is in e, and the traceback's last line
        # is the error: for a refusal, "to_pytorch.Refused: MESSAGE".
        last = str(e).strip().splitlines()[-1]
        prefix = f"{Refused.__module__}.{Refused.__name__}: "
        said = last[len(prefix):] if last.startswith(prefix) else last
        print(f"train_pytorch: a training process failed: {said}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
