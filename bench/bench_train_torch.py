#!/usr/bin/env python3
"""bench/bench_train_torch.py - the PyTorch side of bench_train: the same workloads.

Builds the models bench/bench_train.cpp describes, in PyTorch, and prints the same line,
followed by PyTorch's version and the BLAS library it used (see blas_library below):
    workload=<w> threads=<t> ms_per_step=<median> peak_rss_mb=<m> (pytorch <v>) blas=<path> blas_core=<core>
--blas prints only blas=<path> blas_core=<core> and stops. Unless OPENBLAS_CORETYPE is set, it
is set to the core this CPU has before torch loads OpenBLAS (openblas_core_for_this_cpu).
Only for comparison; seqgrad never needs PyTorch. With Debian's python3-torch installed:
    /usr/bin/python3 bench/bench_train_torch.py --workload lstm_attn --threads 1
"""
import argparse
import ctypes
import math
import os
import resource
import statistics
import sys
import time


def threads_flag():
    """--threads, read before torch loads: its BLAS sizes its own thread pool on import."""
    for i, arg in enumerate(sys.argv):
        if arg == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


def openblas_core_for_this_cpu():
    """The OpenBLAS core with this CPU's widest vectors, from Linux's CPU flags, or None.

    OpenBLAS picks its kernels from the CPU's model number, and a release older than the CPU
    falls back to a generic core (see blas_core below). SkylakeX where the CPU has AVX-512,
    Haswell where it has AVX2 and FMA (Zen runs the same kernels); tests/cpu_kernels.sh reads
    the same flags for bench/compare_train.sh.
    """
    try:
        with open("/proc/cpuinfo") as info:
            flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return None
    if all(f in flags for f in ("avx512f", "avx512vl", "avx512bw", "avx512dq")):
        return "SkylakeX"
    if "avx2" in flags and "fma" in flags:
        return "Haswell"
    return None


for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = threads_flag()
# An honest anchor: OpenBLAS reads OPENBLAS_CORETYPE when torch loads it, so it is set here, to
# the core this CPU has, unless the caller set it.
if not os.environ.get("OPENBLAS_CORETYPE") and openblas_core_for_this_cpu():
    os.environ["OPENBLAS_CORETYPE"] = openblas_core_for_this_cpu()

try:
    import torch
    from torch import nn
except ImportError:
    sys.exit("bench_train_torch: PyTorch is not installed (apt-get install python3-torch)")

VOCAB, BATCH, SRC_LEN, TGT_LEN = 40, 64, 20, 20
MAX_VARLEN = 21  # transformer_varlen's longest source or target


class VarlenLengths:
    """transformer_varlen's lengths, drawn exactly as bench_train.cpp's VarlenLengths draws them:
    x <- (1103515245 x + 12345) mod 2^31, length = 2 + (x >> 16) mod 20, from x = 1."""

    def __init__(self):
        self.x = 1

    def next(self):
        self.x = (1103515245 * self.x + 12345) % (1 << 31)
        return 2 + (self.x >> 16) % 20


class LstmAttn(nn.Module):
    """Luong attention, 'general' score, input feeding; see bench_train.cpp."""

    E, H = 64, 128

    def __init__(self):
        super().__init__()
        E, H = self.E, self.H
        self.src_embed = nn.Embedding(VOCAB, E)
        self.tgt_embed = nn.Embedding(VOCAB, E)
        self.encoder = nn.LSTM(E, H, batch_first=True)
        self.cell = nn.LSTMCell(E + H, H)
        self.score = nn.Linear(H, H, bias=False)  # score(h, s) = h^T W s
        self.combine = nn.Linear(2 * H, H)
        self.out = nn.Linear(H, VOCAB)

    def forward(self, src, tgt_in):
        B, T = tgt_in.shape
        memory, (h, c) = self.encoder(self.src_embed(src))  # (B, S, H)
        h, c = h[0], c[0]
        y = self.tgt_embed(tgt_in)
        feed = torch.zeros(B, self.H)
        keys = memory
        feeds = []
        for t in range(T):
            h, c = self.cell(torch.cat([y[:, t], feed], 1), (h, c))
            scores = torch.bmm(keys, self.score(h).unsqueeze(2)).squeeze(2)  # (B, S)
            weights = torch.softmax(scores, 1)
            context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)
            feed = torch.tanh(self.combine(torch.cat([context, h], 1)))
            feeds.append(feed)
        return self.out(torch.stack(feeds, 1))


def sinusoidal(length, width):
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10000.0) / width))
    pe = torch.zeros(length, width)
    pe[:, 0::2] = torch.sin(position * rate)
    pe[:, 1::2] = torch.cos(position * rate)
    return pe


class TransformerModel(nn.Module):
    C = 128

    def __init__(self):
        super().__init__()
        C = self.C
        self.src_embed = nn.Embedding(VOCAB, C)
        self.tgt_embed = nn.Embedding(VOCAB, C)
        self.transformer = nn.Transformer(d_model=C, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=512, dropout=0.0, batch_first=True)
        self.generator = nn.Linear(C, VOCAB)
        self.register_buffer("pe", sinusoidal(256, C))
        longest = max(TGT_LEN, MAX_VARLEN)
        self.register_buffer("causal", torch.triu(torch.full((longest, longest), float("-inf")), 1))

    def forward(self, src, tgt_in):
        scale = math.sqrt(self.C)
        T = tgt_in.shape[1]
        s = self.src_embed(src) * scale + self.pe[: src.shape[1]]
        t = self.tgt_embed(tgt_in) * scale + self.pe[:T]
        return self.generator(self.transformer(s, t, tgt_mask=self.causal[:T, :T]))


def blas_library():
    """The BLAS libraries this process has loaded, as paths joined by commas, or "unknown".

    Debian's PyTorch calls whichever libblas.so.3 the system's alternatives name: the slow
    reference BLAS (.../blas/libblas.so.3) unless an optimised one such as OpenBLAS
    (.../openblas-pthread/libblas.so.3, package libopenblas0-pthread) is installed. The
    comparison is only fair against an optimised one, so the line says which it was. Every
    match is listed, libblas.so first (the one Debian's PyTorch links), because other modules
    may bring a BLAS of their own (a numpy wheel bundles OpenBLAS under another name).
    """
    found = []
    try:
        with open("/proc/self/maps", errors="surrogateescape") as maps:
            for line in maps:
                fields = line.rstrip("\n").split(maxsplit=5)  # address perms offset dev inode path
                if len(fields) < 6 or not fields[5].startswith("/"):
                    continue
                path = fields[5].removesuffix(" (deleted)")
                name = os.path.basename(path)
                if name.startswith(("libblas.so", "libopenblas", "libmkl_rt", "libblis", "libflexiblas")):
                    real = os.path.realpath(path)
                    if real not in found:
                        found.append(real)
    except OSError:
        pass
    found.sort(key=lambda p: not os.path.basename(p).startswith("libblas.so"))
    return ",".join(found) if found else "unknown"


def blas_core():
    """The kernel set OpenBLAS chose ("SkylakeX", "Haswell", "Prescott", ...), or "unknown".

    OpenBLAS picks its kernels from the CPU's model number, and a release older than the CPU
    falls back to a generic core: Debian's 0.3.21 runs SSE3 "Prescott" kernels on a Sapphire
    Rapids Xeon, a third of the speed it has there. OPENBLAS_CORETYPE, read when the library
    loads, overrides the choice; bench/compare_train.sh sets it to the core the CPU has.
    """
    for path in blas_library().split(","):
        try:
            lib = ctypes.CDLL(path)
            get = lib.openblas_get_corename
        except (OSError, AttributeError):
            continue
        get.restype = ctypes.c_char_p
        return get().decode(errors="replace").strip() or "unknown"
    return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=["lstm_attn", "transformer", "transformer_varlen"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--blas", action="store_true", help="print the BLAS library PyTorch uses, and stop")
    args = parser.parse_args()
    if args.blas:
        # Debian's torch maps its BLAS on import; one product makes sure a lazily loaded one is too.
        torch.ones(2, 2) @ torch.ones(2, 2)
        print(f"blas={blas_library()} blas_core={blas_core()}")
        return
    if args.workload is None:
        parser.error("the following argument is required: --workload")
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(0)
    model = LstmAttn() if args.workload == "lstm_attn" else TransformerModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    lengths = VarlenLengths() if args.workload == "transformer_varlen" else None

    def step():
        S, T = (lengths.next(), lengths.next()) if lengths else (SRC_LEN, TGT_LEN)
        src = torch.randint(4, VOCAB, (BATCH, S))
        tgt = torch.randint(4, VOCAB, (BATCH, T + 1))
        optimizer.zero_grad()
        logits = model(src, tgt[:, :-1])
        loss = loss_fn(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(args.warmup):
        step()
    times, cpu = [], []
    for _ in range(args.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"workload={args.workload} threads={args.threads} ms_per_step={statistics.median(times):.2f} "
          f"peak_rss_mb={peak_mb:.1f} (pytorch {torch.__version__}) blas={blas_library()} blas_core={blas_core()}")
    print(f"# cpu_ms_per_step={statistics.median(cpu):.2f} (median CPU time of the process)", file=sys.stderr)


if __name__ == "__main__":
    main()
