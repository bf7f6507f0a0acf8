// nn/recommenders/afm.cpp - pairwise interactions by two index_selects, scored, softmaxed and pooled.
#include "nn/recommenders/afm.h"

#include "nn/attention/attention.h"
#include "tensor/check.h"

namespace seqgrad::nn {

std::vector<std::pair<int64_t, int64_t>> field_pairs(int64_t F) {
  check(F >= 2, "field_pairs: expected at least 2 fields, got ", F);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t i = 0; i < F; ++i)
    for (int64_t j = i + 1; j < F; ++j) pairs.emplace_back(i, j);
  return pairs;
}

AttentionalFactorizationMachine::AttentionalFactorizationMachine(int64_t k, int64_t a) : embed_dim(k), attention_size(a) {
  check(k > 0 && a > 0, "AttentionalFactorizationMachine: expected a positive embed_dim and attention_size, got ", k,
        " and ", a);
  attention = register_module("attention", std::make_shared<Linear>(k, a));
  score = register_module("score", std::make_shared<Linear>(a, 1, /*bias=*/false));
  projection = register_module("projection", std::make_shared<Linear>(k, 1, /*bias=*/false));
}

std::string AttentionalFactorizationMachine::extra_repr() const {
  return cat("embed_dim=", embed_dim, ", attention_size=", attention_size);
}

// [docs:afm_forward]
AFMResult AttentionalFactorizationMachine::forward_with_weights(const Variable& v) {
  check(v.dim() == 3 && v.size(1) >= 2 && v.size(2) == embed_dim, name(),
        ": expected fields of shape (B, F, ", embed_dim, ") with F >= 2, got ", v.shape());
  const int64_t B = v.size(0);
  const auto pairs = field_pairs(v.size(1));
  const int64_t P = static_cast<int64_t>(pairs.size());
  Tensor left = Tensor::empty({P}), right = Tensor::empty({P});
  for (int64_t n = 0; n < P; ++n) {
    left.data()[n] = static_cast<real>(pairs[n].first);
    right.data()[n] = static_cast<real>(pairs[n].second);
  }
  // Every interaction at once: rows i and rows j of each example, multiplied element-wise.
  const Variable p = index_select(v, 1, left) * index_select(v, 1, right);  // (B, P, K)
  // The attention network scores each interaction on its own; the softmax runs over the pairs.
  const Variable e = reshape(score->forward(relu(attention->forward(p))), {B, P});  // (B, P)
  const Variable a = softmax(e, 1);                                                 // (B, P)
  // Weighted sum of the interactions, then the projection p^T to one number per example.
  const Variable pooled = soft_context(a, p);  // sum_ij a_ij p_ij: (B, P) and (B, P, K) -> (B, K)
  return {reshape(projection->forward(pooled), {B}), a};
}
// [docs:end]

}  // namespace seqgrad::nn
