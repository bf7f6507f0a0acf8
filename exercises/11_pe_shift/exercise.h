// exercises/11_pe_shift - PE(p + k) is a linear function of PE(p) (chapter 9).
//
// Chapter 9 proves that for the sinusoidal table (nn::sinusoidal_table) there is, for every
// shift k, one matrix M_k, the same for every position p, with
//   PE(p + k) = M_k PE(p)
// Build it. C is even; M_k is (C, C), block diagonal with one 2 x 2 rotation per frequency
// w_i = 1 / 10000^(2i / C), acting on the pair (PE(p, 2i), PE(p, 2i+1)) = (sin w_i p, cos w_i p).
// Work out the 2 x 2 block from the angle-addition formulas; watch the sign.
#pragma once

#include <cstdint>

#include "seqgrad.h"

seqgrad::Tensor shift_matrix(int64_t k, int64_t C);
