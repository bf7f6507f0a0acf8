// tensor/dtype.h - the one element type of every seqgrad tensor.
//
// seqgrad stores float32, like PyTorch's default. The type is one typedef so that the
// gradient-check tests can rebuild the whole library in double precision (-DSEQGRAD_DOUBLE),
// where finite differences are accurate enough to catch a backward that is off by 1%.
// Integer data (token ids, class labels, masks) is stored as whole-number floats: float32
// holds every integer up to 2^24 = 16,777,216 exactly, far more than any vocabulary here.
#pragma once

namespace seqgrad {

#ifdef SEQGRAD_DOUBLE
using real = double;
constexpr const char* kRealName = "float64";
#else
using real = float;
constexpr const char* kRealName = "float32";
#endif

}  // namespace seqgrad
