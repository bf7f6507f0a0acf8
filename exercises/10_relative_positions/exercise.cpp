// exercises/10_relative_positions/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

nn::AttentionResult relative_attention(const Variable& q, const Variable& k, const Variable& v, const Variable& bias,
                                       int64_t K, const Tensor& mask) {
  // TODO(exercise 10): this is plain scaled dot-product attention; the bias is ignored.
  // Compute the scores yourself (see nn::scaled_dot_product_attention in nn/attention/attention.cpp),
  // add the (T, S) table of biases, then nn::masked_softmax and the weighted sum.
  (void)bias;
  (void)K;
  return nn::scaled_dot_product_attention(q, k, v, mask);
}
