#!/bin/sh
# bench/compare_train.sh - seqgrad against PyTorch on the standard training workloads.
#
# Runs, ROUNDS times (default 3), for each workload and for 1 and 2 threads, PyTorch's side
# (bench/bench_train_torch.py) and then seqgrad's (build/bench_train), alternating so that a
# change in the machine's load hits both sides alike. Prints every raw line, then a table of
# the medians over the rounds with the ratios the performance chapter reports:
#   seqgrad / PyTorch on the same thread count, and seqgrad's 1-thread / 2-thread speed-up;
# and a second table with those ratios round by round and their medians (a third, below,
# with the speed of the cores at the start of each round, and a fourth with the peak memory
# of both sides on transformer_varlen, the Transformer on batches whose lengths change every
# step, run on 1 thread in each round; PyTorch's figure includes the ~235 MB that importing
# torch takes before any step). Each round also runs
# `bench_train --threads 1,2`, which alternates 1 and 2 threads step by step in one process:
# its speed-up compares steps milliseconds apart, which the machine's other load hits alike.
#
# On a virtual machine the host may run other machines' work on the same physical cores. Linux
# counts the time a virtual core was ready to run but the host ran something else as "steal"
# (/proc/stat). The line of every run gets steal=<percent>: the steal during that run as a
# share of the CPU time the machine asked for (busy + stolen). A two-thread step waits at
# every job's end for the slower core, so it loses more to steal than a one-thread step does.
# Steal is not the only interference: a core can also keep running, slowed by another
# machine's work on the same physical core. So each round starts with build/bench_cores, which
# times the same fixed arithmetic on one core alone and on both cores at once
# (docs/performance.md, section 5).
#
#   make bench && sh bench/compare_train.sh [options] [ROUNDS]
#
# Options:
#   --precision fp32|bf16  bf16: PyTorch runs forward and loss under torch.autocast to bfloat16
#                          (float32 weights), seqgrad's bench_train gets --precision bf16.
#                          Default fp32.
#   --replicas R           passed to seqgrad's bench_train only (the PyTorch side has no such flag).
#   --steps N              measured steps per run on both sides (default: theirs, 30); a small N
#                          is for trying the script, not for figures.
#   --blas-core NAME       run PyTorch's OpenBLAS on this core, unchecked (as SEQGRAD_BLAS_CORE=NAME
#                          does); without it, the core is chosen as below.
#   --help                 this text.
#
# PyTorch's OpenBLAS core. OpenBLAS picks its kernels when it loads: from OPENBLAS_CORETYPE if
# set, else from the CPU's model number. Both can give it less than the CPU runs: a release older
# than the CPU may not know it (Debian's 0.3.21 runs SSE3 "Prescott" kernels on a Sapphire Rapids
# Xeon, a third of its speed there), and an environment may preset a weaker core (AVX2's Haswell
# on an AVX-512 machine); PyTorch's times would then flatter seqgrad. So before the rounds,
# `bench_train_torch.py --blas` chooses the core: the strongest the CPU's flags allow (Cooperlake
# for AVX-512 with BF16, SkylakeX for AVX-512, Haswell for AVX2, Sandybridge for AVX) that
# computes a product correctly in a child process; the environment's core only if it is as
# strong and correct too. Where it replaces the environment's core it says so (a "# NOTE" line
# here), and every PyTorch line records both (blas_core=, blas_core_preset=). Each PyTorch run
# then gets that core with --blas-core, so the check is not repeated. If no core passes the
# check, the script stops.
#
# PyTorch is needed only here (Debian: apt-get install python3-torch libopenblas0-pthread; without
# OpenBLAS, Debian's PyTorch runs on the slow reference BLAS and the script stops); seqgrad never
# uses it.
set -eu
usage() { sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { echo "compare_train: $*" >&2; exit 2; }
ROUNDS=3 PRECISION=fp32 REPLICAS="" STEPS="" FORCE_CORE=${SEQGRAD_BLAS_CORE:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --precision|--replicas|--steps|--blas-core)
            [ $# -ge 2 ] || die "$1 needs a value (see --help)"
            case "$1" in
                --precision) PRECISION=$2 ;;
                --replicas) REPLICAS=$2 ;;
                --steps) STEPS=$2 ;;
                --blas-core) FORCE_CORE=$2 ;;
            esac
            shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die "unknown option '$1' (expected --precision, --replicas, --steps, --blas-core or --help)" ;;
        *) ROUNDS=$1; shift ;;
    esac
done
whole() { case "$1" in ''|*[!0-9]*|0*) return 1 ;; esac; }
whole "$ROUNDS" || die "ROUNDS: expected a whole number from 1, got '$ROUNDS'"
case "$PRECISION" in fp32|bf16) ;; *) die "--precision: expected fp32 or bf16, got '$PRECISION'" ;; esac
[ -z "$REPLICAS" ] || whole "$REPLICAS" || die "--replicas: expected a whole number from 1, got '$REPLICAS'"
[ -z "$STEPS" ] || whole "$STEPS" || die "--steps: expected a whole number from 1, got '$STEPS'"
case "$FORCE_CORE" in *[!A-Za-z0-9_]*) die "--blas-core: expected an OpenBLAS core name such as SkylakeX, got '$FORCE_CORE'" ;; esac
# The flags each side adds to every run (whole numbers and names only, so they split on spaces).
OURS_FLAGS="${STEPS:+--steps $STEPS}"
TORCH_FLAGS="${STEPS:+--steps $STEPS}"
if [ "$PRECISION" = bf16 ]; then
    OURS_FLAGS="$OURS_FLAGS --precision bf16"
    TORCH_FLAGS="$TORCH_FLAGS --precision bf16"
fi
OURS_FLAGS="$OURS_FLAGS${REPLICAS:+ --replicas $REPLICAS}"
OURS_FLAGS=${OURS_FLAGS# } TORCH_FLAGS=${TORCH_FLAGS# }

PY=${PYTHON:-/usr/bin/python3}
OURS=build/bench_train CORES=build/bench_cores
for b in "$OURS" "$CORES"; do
    [ -x "$b" ] || die "$b not built; run 'make bench' first"
done
"$PY" -c "import torch" 2>/dev/null || die "PyTorch is not importable by $PY (apt-get install python3-torch)"
RAW=$(mktemp) ERRS=$(mktemp)
trap 'rm -f "$RAW" "$ERRS"' EXIT
# A bench_train too old for a flag asked of it would fail in the first round, its message
# discarded with the rest of its stderr: one short step first says which flag it refused.
if [ -n "$OURS_FLAGS" ]; then
    "$OURS" --workload lstm_attn --threads 1 $OURS_FLAGS --steps 1 --warmup 0 >/dev/null 2>"$ERRS" ||
        die "$OURS refused the flags '$OURS_FLAGS' it was given: $(head -n 1 "$ERRS")"
fi
# Debian's PyTorch calls whatever libblas.so.3 the system provides. Without an optimised BLAS
# installed that is the reference BLAS, whose matrix products are plain loops: PyTorch's steps
# then take several times as long, and the comparison would flatter seqgrad.
# (The check knows Debian's paths; elsewhere the library is only printed.)
BLAS_LINE=$("$PY" bench/bench_train_torch.py --blas ${FORCE_CORE:+--blas-core "$FORCE_CORE"} 2>"$ERRS") ||
    die "$PY bench/bench_train_torch.py --blas failed: $(cat "$ERRS")"
BLAS=$(echo "$BLAS_LINE" | sed -n 's/^blas=\([^ ]*\).*/\1/p')
CORE=$(echo "$BLAS_LINE" | sed -n 's/.* blas_core=\([^ ]*\).*/\1/p')
CORE_HOW=$(sed -n 's/^# OpenBLAS core: //p' "$ERRS")
[ -n "$BLAS" ] || die "$PY bench/bench_train_torch.py --blas printed no blas= line"
if grep -q '^# WARNING' "$ERRS"; then
    cat "$ERRS" >&2
    die "no OpenBLAS core passed the check, so PyTorch's times would be no honest anchor;" \
        "--blas-core NAME runs one anyway"
fi
case "$BLAS" in
    */blas/libblas.so*)
        die "PyTorch is using the reference BLAS ($BLAS), which would make it several times slower" \
            "than it can be; install OpenBLAS first (apt-get install libopenblas0-pthread)" ;;
esac
# Every PyTorch run loads the core chosen once, here.
case "$CORE" in ''|unknown) ;; *) TORCH_FLAGS="$TORCH_FLAGS --blas-core $CORE" ;; esac

# "busy stolen" ticks of all cores so far, or "- -" without Linux's /proc/stat and its steal column.
cpu_ticks() {
    # (printf "%.0f": some awks print big whole numbers as 2.14748e+09)
    awk '/^cpu / && NF >= 9 { printf "%.0f %.0f\n", $2 + $3 + $4 + $7 + $8, $9; found = 1; exit }
         END { if (!found) print "- -" }' /proc/stat 2>/dev/null || echo "- -"
}
# steal_since "busy stolen": the percentage of stolen time since that snapshot, or n/a.
steal_since() {
    echo "$1 $(cpu_ticks)" | awk '$1 == "-" || $3 == "-" || $3 + $4 <= $1 + $2 { print "n/a"; next }
        { b = $3 - $1; s = $4 - $2; printf "%.0f%%\n", 100 * s / (b + s) }'
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg), PyTorch's BLAS: $BLAS, core $CORE ($CORE_HOW)"
grep '^# NOTE' "$ERRS" || true  # the environment's OPENBLAS_CORETYPE replaced, and why
echo "# precision $PRECISION; flags added to every PyTorch run: ${TORCH_FLAGS:-none}; to every seqgrad run: ${OURS_FLAGS:-none}"
echo "# CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1); seqgrad's gemm kernel: on each seqgrad line (kernel=)"
for r in $(seq "$ROUNDS"); do
    cores=$("$CORES" | sed -n 's/^cores: //p')
    [ -n "$cores" ] || { echo "compare_train: $CORES printed no 'cores:' line" >&2; exit 1; }
    echo "round=$r side=cores $cores" | tee -a "$RAW"
    for w in lstm_attn transformer; do
        for t in 1 2; do
            before=$(cpu_ticks)
            line=$("$PY" bench/bench_train_torch.py --workload "$w" --threads "$t" $TORCH_FLAGS 2>/dev/null)
            echo "round=$r side=torch $line steal=$(steal_since "$before")" | tee -a "$RAW"
            before=$(cpu_ticks)
            line=$("$OURS" --workload "$w" --threads "$t" $OURS_FLAGS 2>/dev/null)
            echo "round=$r side=seqgrad $line steal=$(steal_since "$before")" | tee -a "$RAW"
        done
        before=$(cpu_ticks)
        ratio=$("$OURS" --workload "$w" --threads 1,2 $OURS_FLAGS 2>&1 >/dev/null | sed -n 's/^# interleaved: .*: //p')
        steal=$(steal_since "$before")
        [ -n "$ratio" ] || { echo "compare_train: $OURS --threads 1,2 printed no interleaved ratio" >&2; exit 1; }
        echo "round=$r side=interleaved workload=$w speedup=$ratio steal=$steal" | tee -a "$RAW"
    done
    w=transformer_varlen
    before=$(cpu_ticks)
    line=$("$PY" bench/bench_train_torch.py --workload "$w" --threads 1 $TORCH_FLAGS 2>/dev/null)
    echo "round=$r side=torch $line steal=$(steal_since "$before")" | tee -a "$RAW"
    before=$(cpu_ticks)
    line=$("$OURS" --workload "$w" --threads 1 $OURS_FLAGS 2>/dev/null)
    echo "round=$r side=seqgrad $line steal=$(steal_since "$before")" | tee -a "$RAW"
done
echo "# done $(date -u '+%H:%M UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# Median per (side, workload, threads); then the table.
awk '
function field(name,   i, kv) {
    for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] }
    return ""
}
function median_of(list,   n, i, j, a, tmp) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
        if (a[j] + 0 < a[i] + 0) { tmp = a[i]; a[i] = a[j]; a[j] = tmp }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function median(key) { return median_of(vals[key]) }
function steal_median(key) { return steals[key] == "" ? "n/a" : sprintf("%.0f%%", median_of(steals[key])) }
field("side") == "cores" {
    probe[field("round")] = field("alone_ms") " ms alone, " field("together_ms") " ms together"
    next
}
field("side") == "interleaved" {
    il[field("workload") " " field("round")] = field("speedup")
    ils[field("workload") " " field("round")] = field("steal")
    next
}
{
    key = field("side") " " field("workload") " " field("threads")
    vals[key] = vals[key] " " field("ms_per_step")
    rss[key] = field("peak_rss_mb")
    rss_all[key] = rss_all[key] " " field("peak_rss_mb")
    if (field("steal") ~ /%$/) steals[key] = steals[key] " " (field("steal") + 0)
    ms[key " " field("round")] = field("ms_per_step")
    if (field("round") + 0 > rounds) rounds = field("round") + 0
}
END {
    printf "\n| workload | threads | PyTorch ms/step | seqgrad ms/step | seqgrad / PyTorch |"
    printf " seqgrad 1t / 2t | PyTorch peak RSS MB | seqgrad peak RSS MB | steal PyTorch / seqgrad |\n"
    printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    split("lstm_attn transformer", ws, " ")
    for (wi = 1; wi <= 2; wi++) for (t = 1; t <= 2; t++) {
        w = ws[wi]
        pt = median("torch " w " " t); sg = median("seqgrad " w " " t)
        up = (t == 2) ? sprintf("%.2fx", median("seqgrad " w " 1") / sg) : ""
        printf "| %s | %d | %.1f | %.1f | %.2f | %s | %s | %s | %s / %s |\n", w, t, pt, sg, sg / pt, up,
               rss["torch " w " " t], rss["seqgrad " w " " t], steal_median("torch " w " " t),
               steal_median("seqgrad " w " " t)
    }
    # The same ratios round by round: the two sides of a round ran a minute apart, so a ratio
    # within a round is less exposed to the machine'"'"'s load drifting than a ratio of medians.
    printf "\n| workload | seqgrad / PyTorch, 1 thread, each round | median |"
    printf " seqgrad 1t / 2t, each round | median | seqgrad 1t / 2t, steps interleaved, each round | median |"
    printf " steal in the interleaved runs |\n"
    printf "|---|---|---:|---|---:|---|---:|---|\n"
    for (wi = 1; wi <= 2; wi++) {
        w = ws[wi]; rl = ""; sl = ""; il_l = ""; rv = ""; sv = ""; iv = ""; st_l = ""
        for (r = 1; r <= rounds; r++) {
            x = ms["seqgrad " w " 1 " r] / ms["torch " w " 1 " r]
            y = ms["seqgrad " w " 1 " r] / ms["seqgrad " w " 2 " r]
            z = il[w " " r]
            rl = rl sprintf("%s%.2f", r > 1 ? ", " : "", x); rv = rv " " x
            sl = sl sprintf("%s%.2fx", r > 1 ? ", " : "", y); sv = sv " " y
            il_l = il_l sprintf("%s%.2fx", r > 1 ? ", " : "", z); iv = iv " " z
            st_l = st_l sprintf("%s%s", r > 1 ? ", " : "", ils[w " " r])
        }
        printf "| %s | %s | %.2f | %s | %.2fx | %s | %.2fx | %s |\n", w, rl, median_of(rv), sl, median_of(sv),
               il_l, median_of(iv), st_l
    }
    # The speed of the cores at the start of each round: the same arithmetic, timed on one core and
    # then on both at once. Equal numbers: both cores ran at full speed at the moment of the probe.
    printf "\n| round | build/bench_cores: one core alone; both cores together |\n|---:|---|\n"
    for (r = 1; r <= rounds; r++) printf "| %d | %s |\n", r, probe[r]
    # Memory on batches of changing length: the medians over the rounds, 1 thread.
    w = "transformer_varlen"
    printf "\n| workload | threads | PyTorch ms/step | seqgrad ms/step | PyTorch peak RSS MB | seqgrad peak RSS MB |"
    printf " seqgrad / PyTorch peak RSS |\n|---|---:|---:|---:|---:|---:|---:|\n"
    pr = median_of(rss_all["torch " w " 1"]); sr = median_of(rss_all["seqgrad " w " 1"])
    printf "| %s | 1 | %.1f | %.1f | %.1f | %.1f | %.2f |\n", w, median("torch " w " 1"), median("seqgrad " w " 1"),
           pr, sr, sr / pr
}' "$RAW"
