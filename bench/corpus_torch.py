#!/usr/bin/env python3
"""bench/corpus_torch.py - the PyTorch reference for chapter 10's real corpus: the same Transformer,
the same split, the same training, for the same minutes.

It takes a checkpoint of `seqgrad train --arch transformer` (for the model's configuration, its
vocabularies and byte-pair merges, and its starting weights) and trains that model in PyTorch
(docs/to_pytorch.py builds it of torch.nn's own Transformer layers) as `seqgrad train` does:
cross-entropy over the real target tokens, Adam with betas (0.9, 0.98) and eps 1e-9, a linear
warm-up over 100 steps to the learning rate and then that rate, gradients clipped to a global
norm of 1, the checkpoint's dropout, batches of pairs of similar length holding up to
--batch-tokens positions (the longer side: the source, or the target + 1), their order shuffled
each epoch. After each epoch, and when --minutes run out, it computes the validation loss; the
best model goes to --out as a checkpoint seqgrad reads, so `seqgrad eval --beam 4` scores both
models with the same decoder and the same BLEU.

    python3 bench/corpus_torch.py START.safetensors --train zh.train.tsv --valid zh.valid.tsv \\
        --batch-tokens 4000 --minutes 15 --threads 1 --seed 1 --out torch.safetensors

What it is not: seqgrad's random numbers (another batch order and other dropout masks) or its
exact batching, so the two runs are alike, not equal, step for step. Processor time (user + system,
this process) is printed with each epoch, as chapter 10's table gives seqgrad's.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def choose_blas_core():
    """The strongest OpenBLAS core this CPU runs correctly, as bench_train_torch.py chooses it (a
    preset OPENBLAS_CORETYPE may name a weaker one), set before torch loads OpenBLAS; SEQGRAD_BLAS_CORE
    forces one. Returns the line to print."""
    forced = os.environ.get("SEQGRAD_BLAS_CORE", "")
    if forced:
        os.environ["OPENBLAS_CORETYPE"] = forced
        return f"blas_core={forced} (SEQGRAD_BLAS_CORE)"
    run = subprocess.run([sys.executable, os.path.join(HERE, "bench_train_torch.py"), "--blas"], capture_output=True,
                         text=True)
    found = re.search(r"blas_core=(\S+) blas_core_preset=(\S+)", run.stdout)
    if not found:
        return "blas_core=unknown (bench_train_torch.py --blas did not say)"
    core, preset = found.groups()
    if core not in ("unknown", "unset"):
        os.environ["OPENBLAS_CORETYPE"] = core
    return f"blas_core={core} blas_core_preset={preset}"


def threads_flag():
    """--threads N (or --threads=N) from the command line, before argparse: the BLAS and OpenMP
    pools size themselves from the environment when torch loads."""
    for i, word in enumerate(sys.argv):
        if word == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if word.startswith("--threads="):
            return word.split("=", 1)[1]
    return "1"


if __name__ == "__main__":
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads_flag()
BLAS_LINE = choose_blas_core() if __name__ == "__main__" else ""
import torch  # noqa: E402  (after the core is chosen: OpenBLAS reads OPENBLAS_CORETYPE when it loads)

sys.path.insert(0, os.path.join(HERE, "..", "docs"))
from to_pytorch import Refused, load_checkpoint, read_tsv, save_checkpoint  # noqa: E402
from train_pytorch import collate, encode_pairs, loss_of, validation_loss  # noqa: E402


def token_batches(examples, batch_tokens, rng):
    """Lists of indices: pairs sorted by length (ties at random), cut where one more pair would
    take the batch past batch_tokens positions (its size times its longest pair), in random order."""
    size = [max(len(s), len(t) + 1) for s, t in examples]
    order = sorted(range(len(examples)), key=lambda i: (size[i], rng.random()))
    batches, current, longest = [], [], 0
    for i in order:
        if current and max(longest, size[i]) * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, size[i])
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a checkpoint of `seqgrad train --arch transformer`: the model and its sides")
    parser.add_argument("--train", required=True, help="a TSV file of source<TAB>target lines to train on")
    parser.add_argument("--valid", required=True, help="a TSV file for the validation loss")
    parser.add_argument("--batch-tokens", type=int, default=4000, help="positions per batch, at most (4000)")
    parser.add_argument("--minutes", type=float, required=True, help="the budget, wall-clock minutes")
    parser.add_argument("--lr", type=float, default=1e-3, help="learning rate after the warm-up (1e-3)")
    parser.add_argument("--threads", type=int, default=1, help="torch's intra-op threads (1)")
    parser.add_argument("--seed", type=int, default=0, help="batch order and dropout (0)")
    parser.add_argument("--out", required=True, help="where to write the best model, a checkpoint seqgrad reads")
    args = parser.parse_args()
    if args.batch_tokens < 1 or args.minutes <= 0 or args.threads < 1:
        sys.exit("corpus_torch: expected --batch-tokens, --minutes and --threads above 0")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    try:
        model, src, tgt, config, metadata = load_checkpoint(args.model)
        train_set = encode_pairs(read_tsv(args.train), src, tgt, config["max_len"])
        valid_set = encode_pairs(read_tsv(args.valid), src, tgt, config["max_len"])
    except Refused as e:
        sys.exit(f"corpus_torch: {e}")
    print(f"{len(train_set)} training pairs, {len(valid_set)} validation pairs; "
          f"{sum(p.numel() for p in model.parameters())} parameters; torch {torch.__version__}, "
          f"{args.threads} thread(s); {BLAS_LINE}", flush=True)

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 100))
    start, cpu_start = time.monotonic(), time.process_time()
    best, epoch, steps, out_of_time = float("inf"), 0, 0, False
    model.train()
    while not out_of_time:
        epoch += 1
        total, n = 0.0, 0
        for indices in token_batches(train_set, args.batch_tokens, rng):
            loss = loss_of(model, collate([train_set[i] for i in indices]))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            total, n, steps = total + float(loss), n + 1, steps + 1
            if time.monotonic() - start > 60 * args.minutes:
                out_of_time = True
                break
        valid = validation_loss(model, valid_set)
        cpu = (time.process_time() - cpu_start) / 60
        print(f"epoch {epoch}: train_loss={total / max(n, 1):.4f} valid_loss={valid:.4f} steps={steps} "
              f"processor_minutes={cpu:.1f}" + (" (time budget reached)" if out_of_time else ""), flush=True)
        if valid < best:
            best = valid
            save_checkpoint(model, args.out, metadata)
            print(f"saved {args.out}", flush=True)


if __name__ == "__main__":
    main()
