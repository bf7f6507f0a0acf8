#!/bin/sh
# tests/cpu_kernels.sh - the gemm kernel paths this CPU can run (tensor/gemm.cpp), narrowest
# first, one per line: generic always; avx2 with AVX2 and FMA; avx512 with AVX-512 F, VL, BW
# and DQ. Read from the flags Linux lists in /proc/cpuinfo, which it shows only when the
# operating system saves those registers too, as tensor/gemm.cpp's own test does.
# Used by `make test-kernels`. POSIX sh.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
echo generic
if has avx2 && has fma; then
  echo avx2
  if has avx512f && has avx512vl && has avx512bw && has avx512dq; then echo avx512; fi
fi
