#!/bin/sh
# tests/fuzz/run_fuzzers.sh SECONDS FUZZER... - run each libFuzzer binary for SECONDS seconds,
# starting from its committed seeds (tests/fuzz/corpus/NAME) and the inputs earlier runs found
# (build/fuzz/corpus/NAME, where new ones go), and print one line per fuzzer:
#   fuzz_tsv: ok, 812345 inputs in 20 s, 431 coverage points, 57 inputs in the corpus
# A crash, a sanitizer report, an uncaught exception, a hang (-timeout) or a memory blow-up
# (-rss_limit_mb) stops that fuzzer: its log and the input that did it (build/fuzz/crash-*,
# replay with `build/fuzz/fuzz_NAME FILE`) are printed, and the script exits 1 at the end.
seconds="$1"
shift
# The safetensors target writes files (and the writer fsyncs them): use memory where there is some.
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && TMPDIR=/dev/shm && export TMPDIR
# The fuzzers run JOBS at a time (default: one per core), each on one core; the lines come out
# in the order given.
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
names() {  # BIN: sets name (fuzz_tsv), short (tsv) and dir (build/fuzz)
  name=$(basename "$1")
  short=${name#fuzz_}
  dir=$(dirname "$1")
}
fuzz_one() {  # BIN: run it, then write its exit code beside its log
  bin="$1"
  names "$bin"
  mkdir -p "$dir/corpus/$short"
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$dir/" "$dir/corpus/$short" "tests/fuzz/corpus/$short" >"$dir/$name.log" 2>&1
  echo $? >"$dir/$name.code"
}
running=0
for bin in "$@"; do
  fuzz_one "$bin" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait; running=0; fi
done
wait

status=0
for bin in "$@"; do
  names "$bin"
  log="$dir/$name.log"
  code=$(cat "$dir/$name.code" 2>/dev/null || echo 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
  units=$(ls "$dir/corpus/$short" "tests/fuzz/corpus/$short" | grep -cv '^$\|:$')
  if [ "$code" = 0 ]; then
    echo "$name: ok, ${runs:-?} inputs in $seconds s, ${cov:-?} coverage points, $units inputs in the corpus"
  else
    echo "$name: FAILED (exit code $code); the end of $log:"
    tail -n 40 "$log"
    status=1
  fi
done
exit $status
