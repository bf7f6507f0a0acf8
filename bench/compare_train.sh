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
#   make bench && sh bench/compare_train.sh [ROUNDS]
#
# PyTorch is needed only here (Debian: apt-get install python3-torch libopenblas0-pthread; without
# OpenBLAS, Debian's PyTorch runs on the slow reference BLAS and the script stops); seqgrad never
# uses it.
set -eu
ROUNDS=${1:-3}
PY=${PYTHON:-/usr/bin/python3}
OURS=build/bench_train CORES=build/bench_cores
for b in "$OURS" "$CORES"; do
    [ -x "$b" ] || { echo "compare_train: $b not built; run 'make bench' first" >&2; exit 2; }
done
"$PY" -c "import torch" 2>/dev/null || {
    echo "compare_train: PyTorch is not importable by $PY (apt-get install python3-torch)" >&2
    exit 2
}
# Debian's PyTorch calls whatever libblas.so.3 the system provides. Without an optimised BLAS
# installed that is the reference BLAS, whose matrix products are plain loops: PyTorch's steps
# then take several times as long, and the comparison would flatter seqgrad.
# (The check knows Debian's paths; elsewhere the library is only printed.)
# An honest anchor: OpenBLAS picks its kernels from the CPU's model number, and a release older
# than the CPU falls back to a generic core (Debian's 0.3.21 runs SSE3 "Prescott" kernels on a
# Sapphire Rapids Xeon, a third of the speed it has there). So unless OPENBLAS_CORETYPE is set
# already, PyTorch's runs get the core this CPU really has: SkylakeX where it has AVX-512,
# Haswell where it has AVX2 (Zen runs the same kernels). The core OpenBLAS then reports is
# checked here and printed on every PyTorch line (blas_core=).
case "$(sh tests/cpu_kernels.sh | tail -n 1)" in
    avx512) WANT_CORE=SkylakeX ;;
    avx2) WANT_CORE=Haswell ;;
    *) WANT_CORE="" ;;
esac
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -n "$WANT_CORE" ]; then
    export OPENBLAS_CORETYPE="$WANT_CORE"
    CORE_HOW="OPENBLAS_CORETYPE=$WANT_CORE set here, the core this CPU has"
else
    CORE_HOW="OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} from the environment"
fi
BLAS_LINE=$("$PY" bench/bench_train_torch.py --blas)
BLAS=$(echo "$BLAS_LINE" | sed -n 's/^blas=\([^ ]*\).*/\1/p')
CORE=$(echo "$BLAS_LINE" | sed -n 's/.* blas_core=//p')
if [ -n "$WANT_CORE" ] && [ "$(echo "$CORE" | tr A-Z a-z)" != "$(echo "$WANT_CORE" | tr A-Z a-z)" ]; then
    echo "compare_train: PyTorch's OpenBLAS runs its '$CORE' kernels, not the $WANT_CORE kernels this CPU" \
         "can run ($CORE_HOW); its times would flatter seqgrad" >&2
    exit 2
fi
[ -n "$BLAS" ] || { echo "compare_train: $PY bench/bench_train_torch.py --blas printed no blas= line" >&2; exit 2; }
case "$BLAS" in
    */blas/libblas.so*)
        echo "compare_train: PyTorch is using the reference BLAS ($BLAS), which would make it" \
             "several times slower than it can be; install OpenBLAS first" \
             "(apt-get install libopenblas0-pthread)" >&2
        exit 2 ;;
esac

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

RAW=$(mktemp)
trap 'rm -f "$RAW"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg), PyTorch's BLAS: $BLAS, core $CORE ($CORE_HOW)"
echo "# CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1); seqgrad's gemm kernel: on each seqgrad line (kernel=)"
for r in $(seq "$ROUNDS"); do
    cores=$("$CORES" | sed -n 's/^cores: //p')
    [ -n "$cores" ] || { echo "compare_train: $CORES printed no 'cores:' line" >&2; exit 1; }
    echo "round=$r side=cores $cores" | tee -a "$RAW"
    for w in lstm_attn transformer; do
        for t in 1 2; do
            before=$(cpu_ticks)
            line=$("$PY" bench/bench_train_torch.py --workload "$w" --threads "$t" 2>/dev/null)
            echo "round=$r side=torch $line steal=$(steal_since "$before")" | tee -a "$RAW"
            before=$(cpu_ticks)
            line=$("$OURS" --workload "$w" --threads "$t" 2>/dev/null)
            echo "round=$r side=seqgrad $line steal=$(steal_since "$before")" | tee -a "$RAW"
        done
        before=$(cpu_ticks)
        ratio=$("$OURS" --workload "$w" --threads 1,2 2>&1 >/dev/null | sed -n 's/^# interleaved: .*: //p')
        steal=$(steal_since "$before")
        [ -n "$ratio" ] || { echo "compare_train: $OURS --threads 1,2 printed no interleaved ratio" >&2; exit 1; }
        echo "round=$r side=interleaved workload=$w speedup=$ratio steal=$steal" | tee -a "$RAW"
    done
    w=transformer_varlen
    before=$(cpu_ticks)
    line=$("$PY" bench/bench_train_torch.py --workload "$w" --threads 1 2>/dev/null)
    echo "round=$r side=torch $line steal=$(steal_since "$before")" | tee -a "$RAW"
    before=$(cpu_ticks)
    line=$("$OURS" --workload "$w" --threads 1 2>/dev/null)
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
