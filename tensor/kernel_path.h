// tensor/kernel_path.h - which instruction set the hand-vectorised kernels run: the blocked
// gemm (tensor/gemm_blocked.h) and exp, sigmoid and tanh (tensor/vmath_lanes.h) are each
// compiled once per path, as are the elementwise loops handed to for_isa (tensor/isa_loop.h:
// relu, the softmaxes, layer norm, the sums, the LSTM cell), and every call goes to the copy of
// the path chosen here.
//
//   avx512   AVX-512 F/VL/BW/DQ, with the operating system saving the 512-bit registers
//   avx2     AVX2 and FMA
//   generic  anything else: the build's own target (`make PORTABLE=1` on x86-64: SSE2)
//
// The path is chosen once, at the first call of a kernel: SEQGRAD_KERNEL=generic|avx2|avx512 if
// set, else the widest the CPU can run. set_gemm_kernel() (tensor/matmul.h) switches at run time.
// The AVX2 and AVX-512 paths give the same bits (both fuse each multiply-add, in the same order).
#pragma once

namespace seqgrad {

enum class KernelPath { generic, avx2, avx512 };

// The path in use (chosen on the first call). Throws std::invalid_argument, naming the paths
// this CPU can run, if SEQGRAD_KERNEL names an unknown path or one the CPU cannot run.
KernelPath kernel_path();

}  // namespace seqgrad
