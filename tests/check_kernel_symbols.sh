#!/bin/sh
# tests/check_kernel_symbols.sh OBJECT... - each object compiled with wider instruction-set flags
# than the rest of the build (tensor/gemm_avx2.o, vmath_avx512.o, ...) may define no code symbol
# that another object could also define. An inline function from a header, emitted out of line
# there as a weak symbol, could be the copy the linker keeps for the whole program, and then a
# CPU without those instructions would run AVX-512 code through it. Allowed: the copy's own
# entry points (seqgrad::gemm_avx512::gemm, seqgrad::vmath_avx2::tanh, ...), local symbols, and
# data. Prints the offending symbols and exits 1; exits 0 with a note if nm is missing.
command -v nm >/dev/null 2>&1 || { echo "check_kernel_symbols: nm not found; not checked"; exit 0; }
status=0
for obj in "$@"; do
  [ -f "$obj" ] || { echo "check_kernel_symbols: $obj: no such file" >&2; status=1; continue; }
  # Code that is global, weak or unique (nm types T, W, i, u); weak data (V: the DW.ref
  # personality, the typeinfo an instrumented build emits) holds no instructions.
  bad=$(nm -C "$obj" | awk '$2 ~ /^[TWiu]$/' | grep -vE ' seqgrad::[a-z]+_(generic|avx2|avx512)::[a-z_]+\(')
  if [ -n "$bad" ]; then
    echo "check_kernel_symbols: $obj defines symbols another object could define too:" >&2
    echo "$bad" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "check_kernel_symbols: $# objects define only their own entry points"
exit $status
