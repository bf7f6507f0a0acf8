#!/usr/bin/env python3
"""bench/bench_train_torch.py - the PyTorch side of bench_train: the same workloads.

Builds the models bench/bench_train.cpp describes, in PyTorch, and prints the same line,
followed by PyTorch's version, the BLAS library it used (see blas_library below) and OpenBLAS's
core, the one it ran and the one the environment's OPENBLAS_CORETYPE named ("unset" if none):
    workload=<w> threads=<t> ms_per_step=<median> peak_rss_mb=<m> (pytorch <v>) blas=<path>
        blas_core=<core> blas_core_preset=<core>   (one line; " precision=bf16" appended with --precision bf16)
--blas prints only blas=<path> blas_core=<core> blas_core_preset=<core> and stops.

OpenBLAS's core: an honest anchor needs the strongest kernels the CPU runs correctly, and neither
OpenBLAS's own choice (a release older than the CPU may not know it) nor a preset
OPENBLAS_CORETYPE (an image may name a weaker core) guarantees them. So before torch loads
OpenBLAS, choose_core tries the cores this CPU's flags allow, strongest first, each in a child
process that checks one product against a float64 reference, and sets the first that passes;
the environment's core is kept only if it ranks as high and passes too. When it is replaced,
stderr says so. --blas-core NAME (or SEQGRAD_BLAS_CORE=NAME) runs a given core, unchecked.

--precision bf16 runs forward and loss under torch.autocast("cpu", dtype=torch.bfloat16), the
weights, gradients and Adam staying float32. (With PyTorch 1.13, autocast runs the Linear layers
and bmm in bfloat16, while nn.LSTM and nn.LSTMCell stay float32.)

Only for comparison; seqgrad never needs PyTorch. With Debian's python3-torch installed:
    /usr/bin/python3 bench/bench_train_torch.py --workload lstm_attn --threads 1 [--precision bf16]
"""
import argparse
import contextlib
import ctypes
import math
import os
import resource
import signal
import statistics
import subprocess
import sys
import time


def flag_value(name, default=None):
    """The value of a flag in sys.argv (--name V or --name=V), read before argparse runs: the
    thread count and the OpenBLAS core must be in the environment before torch loads its BLAS,
    which reads them once, on import."""
    for i, arg in enumerate(sys.argv):
        if arg == name and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


# OpenBLAS's x86-64 cores (the names OPENBLAS_CORETYPE takes, lowercased) ranked by the widest
# instructions their kernels use: 4 AVX-512 with BF16 (Cooperlake: SkylakeX's sgemm plus bfloat16
# kernels), 3 AVX-512, 2 AVX2 with FMA, 1 AVX, 0 SSE. A name not here ranks -1 (a newer release's,
# or a typo). bench/bench_matmul.cpp ranks them the same way.
CORE_RANKS = {"cooperlake": 4, "skylakex": 3, "haswell": 2, "zen": 2, "sandybridge": 1, "bulldozer": 1,
              "piledriver": 1, "steamroller": 1, "excavator": 1, "prescott": 0, "core2": 0, "penryn": 0,
              "dunnington": 0, "nehalem": 0, "atom": 0, "opteron": 0, "opteron_sse3": 0, "barcelona": 0,
              "nano": 0, "bobcat": 0}
RANK_NAMES = ["SSE", "AVX", "AVX2", "AVX-512", "AVX-512 with BF16"]


def core_rank(name):
    return CORE_RANKS.get(name.lower(), -1)


def rank_name(rank):
    return RANK_NAMES[rank] if 0 <= rank < len(RANK_NAMES) else "unknown"


def openblas_cores_for_this_cpu():
    """The OpenBLAS cores this CPU's flags allow (Linux's /proc/cpuinfo), strongest first.

    Prescott (SSE3) is never offered: where nothing else fits, OpenBLAS's own choice stands.
    """
    try:
        with open("/proc/cpuinfo") as info:
            flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return []
    cores = []
    avx512 = all(f in flags for f in ("avx512f", "avx512vl", "avx512bw", "avx512dq"))
    if avx512 and "avx512_bf16" in flags:
        cores.append("Cooperlake")
    if avx512:
        cores.append("SkylakeX")
    if "avx2" in flags and "fma" in flags:
        cores.append("Haswell")
    if "avx" in flags:
        cores.append("Sandybridge")
    return cores


# The check a core must pass: (N, N) @ (N, N) in float32 on random values in [-1, 1], every entry
# within PROBE_TOLERANCE x the largest entry of the float64 product of the same inputs (summed by
# torch's elementwise kernels, not by the BLAS under test). A correct float32 sum of 300 terms is
# off by about 1e-6 of that. 300 is no multiple of any kernel's block, so the edge code runs too.
PROBE_N, PROBE_TOLERANCE = 300, 1e-4
PROBE_CHECK = (f"a {PROBE_N} x {PROBE_N} product to within {PROBE_TOLERANCE:g} x the largest entry "
               f"of a float64 reference")


def probe_core(name):
    """Runs the check in a child process with OPENBLAS_CORETYPE=name, and returns
    (installed, core, failure): whether torch imported there, the core OpenBLAS reported, and
    why the core is not fit to use (None if it is).

    A child, because OpenBLAS reads the variable once, when torch loads it: a process can only
    ever try one core (and a core whose instructions the CPU lacks dies there of SIGILL, not
    here). The core reported must be the one asked for: a name OpenBLAS does not accept is no
    error there, it falls back to a core of its own choosing from the CPU's flags. (0.3.21 is one
    such: its search of the names stops one short of "Cooperlake", so it reaches Cooperlake only
    by that fallback, on a CPU with AVX512_BF16; fixed in 0.3.22.)
    """
    env = dict(os.environ, OPENBLAS_CORETYPE=name)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    try:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe-blas"], env=env,
                              capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return True, None, f"the check's child failed ({e})"
    if done.returncode == 3:
        return False, None, "PyTorch not importable"
    if done.returncode < 0:
        return True, None, f"died of signal {-done.returncode} ({signal.Signals(-done.returncode).name})"
    report = dict(kv.split("=", 1) for kv in done.stdout.split() if "=" in kv)
    if done.returncode != 0 or "core" not in report or "error" not in report:
        return True, None, f"the check's child failed (exit {done.returncode}: {done.stderr.strip()[-200:]})"
    core, error = report["core"], float(report["error"])
    if core.lower() != name.lower():
        return True, core, f"OpenBLAS ran its {core} core instead"
    if not error <= PROBE_TOLERANCE:  # (also true of a NaN)
        return True, core, f"its product was off by {error:.3g} of the largest entry, more than {PROBE_TOLERANCE:g}"
    return True, core, None


class CoreChoice:
    """What OPENBLAS_CORETYPE is set to before torch loads, and why.

    set_to: the core to load, or "" to leave the variable as the environment has it;
    best: the strongest core this CPU's flags allow that passed the check ("" if none did, or
    none was checked); how: one line on how the core was chosen; notice: a line for stderr when
    the environment's core was replaced, or no core passed the check ("" otherwise).
    """

    def __init__(self, set_to="", best="", how="", notice=""):
        self.set_to, self.best, self.how, self.notice = set_to, best, how, notice


def choose_core(preset, forced):
    """The strongest core this CPU's flags allow that passes the check (probe_core); the
    environment's core (preset) instead only if it ranks as high and passes too. forced (from
    --blas-core or SEQGRAD_BLAS_CORE) is taken as it is, unchecked: a given core, measured on
    purpose."""
    if forced:
        return CoreChoice(set_to=forced, how=f"OPENBLAS_CORETYPE={forced} forced by --blas-core or "
                                              "SEQGRAD_BLAS_CORE, unchecked")
    best, rejected = "", []
    for core in openblas_cores_for_this_cpu():
        installed, reported, failure = probe_core(core)
        if not installed:
            return CoreChoice(how="OpenBLAS's own choice (PyTorch not importable)")
        if reported == "unknown":  # PyTorch's BLAS is another library, which OPENBLAS_CORETYPE does not steer
            return CoreChoice(how="none to choose: PyTorch's BLAS is not OpenBLAS")
        if failure is None:
            best = core
            break
        rejected.append(f"{core}: {failure}")
    failed = f" (failed the check: {'; '.join(rejected)})" if rejected else ""
    if not best:
        how = f"OPENBLAS_CORETYPE={preset} from the environment" if preset else "OpenBLAS's own choice"
        notice = (f"WARNING: no OpenBLAS core this CPU's flags allow computed {PROBE_CHECK}{failed}; "
                  f"OpenBLAS runs {how}, unchecked") if rejected else ""
        return CoreChoice(how=how, notice=notice)
    best_is = (f"the strongest core this CPU's flags allow ({rank_name(core_rank(best))}) that computed "
               f"{PROBE_CHECK}")
    if not preset:
        return CoreChoice(set_to=best, best=best, how=f"OPENBLAS_CORETYPE={best} set here, {best_is}{failed}")
    if preset.lower() == best.lower():
        return CoreChoice(best=best, how=f"OPENBLAS_CORETYPE={preset} from the environment, {best_is}")
    preset_rank, best_rank = core_rank(preset), core_rank(best)
    if preset_rank < 0:
        why = "a core these benchmarks do not know"
    elif preset_rank < best_rank:
        why = f"its kernels use {rank_name(preset_rank)}, {best}'s {rank_name(best_rank)}"
    else:  # as strong or stronger by name: kept if it computes correctly here
        _, _, failure = probe_core(preset)
        if failure is None:
            return CoreChoice(best=best, how=f"OPENBLAS_CORETYPE={preset} from the environment, kept: as strong "
                                             f"as {best}, and it computed {PROBE_CHECK}")
        why = f"it failed the check: {failure}"
    return CoreChoice(
        set_to=best, best=best,
        how=f"OPENBLAS_CORETYPE={best} set here in place of the environment's {preset}, {best_is}",
        notice=(f"NOTE: OpenBLAS core: the environment sets OPENBLAS_CORETYPE={preset}; using {best} instead: "
                f"{why}. {best} computed {PROBE_CHECK}. Both are recorded (blas_core=, blas_core_preset=); "
                "--blas-core NAME or SEQGRAD_BLAS_CORE=NAME forces a core."))


for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = flag_value("--threads", "1")
# An honest anchor: the core is chosen before torch loads OpenBLAS, which reads
# OPENBLAS_CORETYPE then and only then. A probe (--probe-blas) runs on the core its parent set;
# --help needs none.
CORE_PRESET = os.environ.get("OPENBLAS_CORETYPE", "")
if "--probe-blas" in sys.argv or "-h" in sys.argv or "--help" in sys.argv:
    CORE_CHOICE = CoreChoice(how="not chosen")
else:
    CORE_CHOICE = choose_core(CORE_PRESET, flag_value("--blas-core") or os.environ.get("SEQGRAD_BLAS_CORE", ""))
    if CORE_CHOICE.set_to:
        os.environ["OPENBLAS_CORETYPE"] = CORE_CHOICE.set_to
    if CORE_CHOICE.notice:
        print(f"# {CORE_CHOICE.notice}", file=sys.stderr)

try:
    import torch
    from torch import nn
except ImportError:
    if "--probe-blas" in sys.argv:
        sys.exit(3)  # probe_core's code for "no PyTorch here"
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
    """The kernel set OpenBLAS runs in this process ("Cooperlake", "Haswell", "Prescott", ...),
    as its openblas_get_corename names it, or "unknown".

    OpenBLAS picks its kernels when it loads: from OPENBLAS_CORETYPE, else from the CPU's model
    number, and a release older than the CPU falls back to a generic core (Debian's 0.3.21 runs
    SSE3 "Prescott" kernels on a Sapphire Rapids Xeon, a third of the speed it has there); so
    choose_core, above, sets the variable first.
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


def probe_blas():
    """The child side of probe_core: one float32 product through PyTorch's BLAS against a float64
    one from elementwise kernels, printed as core=<core> error=<largest error / largest entry>."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(7)
    a = torch.rand(PROBE_N, PROBE_N, generator=gen) * 2 - 1
    b = torch.rand(PROBE_N, PROBE_N, generator=gen) * 2 - 1
    c = torch.mm(a, b).double()
    a64, b64 = a.double(), b.double()
    # Rows in blocks of 20, so the (20, N, N) products stay small.
    reference = torch.cat([(a64[i:i + 20, :, None] * b64[None, :, :]).sum(1) for i in range(0, PROBE_N, 20)])
    error = (c - reference).abs().max().item() / reference.abs().max().item()
    if not torch.isfinite(c).all():
        error = math.inf
    print(f"core={blas_core()} error={error:.6g}")


def main():
    # No abbreviated flags: --threads and --blas-core are also read before argparse (flag_value).
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--workload", choices=["lstm_attn", "transformer", "transformer_varlen"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                        help="bf16: forward and loss under torch.autocast to bfloat16, weights float32")
    parser.add_argument("--blas-core", metavar="NAME",
                        help="run OpenBLAS on this core, unchecked (as SEQGRAD_BLAS_CORE=NAME does)")
    parser.add_argument("--blas", action="store_true", help="print the BLAS library PyTorch uses, and stop")
    parser.add_argument("--probe-blas", action="store_true", help=argparse.SUPPRESS)  # probe_core's child
    args = parser.parse_args()
    if args.probe_blas:
        probe_blas()
        return
    if args.blas:
        # Debian's torch maps its BLAS on import; one product makes sure a lazily loaded one is too.
        torch.ones(2, 2) @ torch.ones(2, 2)
        print(f"# OpenBLAS core: {CORE_CHOICE.how}", file=sys.stderr)
        print(f"blas={blas_library()} blas_core={blas_core()} blas_core_preset={CORE_PRESET or 'unset'}")
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
    if args.precision == "bf16":
        def autocast():
            return torch.autocast("cpu", dtype=torch.bfloat16)
    else:
        autocast = contextlib.nullcontext  # fp32: the step exactly as it was before bf16 existed

    def step():
        S, T = (lengths.next(), lengths.next()) if lengths else (SRC_LEN, TGT_LEN)
        src = torch.randint(4, VOCAB, (BATCH, S))
        tgt = torch.randint(4, VOCAB, (BATCH, T + 1))
        optimizer.zero_grad()
        # bf16 as PyTorch's autocast documentation has it: forward and loss inside the region,
        # which runs the ops it lists (products, among them) in bfloat16 on copies of the float32
        # weights; backward and the optimizer outside it, the weights staying float32.
        with autocast():
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
    precision = " precision=bf16" if args.precision == "bf16" else ""
    print(f"workload={args.workload} threads={args.threads} ms_per_step={statistics.median(times):.2f} "
          f"peak_rss_mb={peak_mb:.1f} (pytorch {torch.__version__}) blas={blas_library()} "
          f"blas_core={blas_core()} blas_core_preset={CORE_PRESET or 'unset'}{precision}")
    print(f"# OpenBLAS core: {CORE_CHOICE.how}", file=sys.stderr)
    print(f"# cpu_ms_per_step={statistics.median(cpu):.2f} (median CPU time of the process)", file=sys.stderr)


if __name__ == "__main__":
    main()
