// nn/recommenders/din.cpp - the activation unit: one weight per (behaviour, candidate) pair, then the sum.
#include "nn/recommenders/din.h"

#include "nn/attention/attention.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"

namespace seqgrad::nn {

DINActivationUnit::DINActivationUnit(const DINOptions& o) : options(o) {
  check(o.embed_dim > 0 && o.hidden1 > 0 && o.hidden2 > 0, name(), ": expected positive sizes, got embed_dim ",
        o.embed_dim, ", hidden ", o.hidden1, " and ", o.hidden2);
  W1 = register_module("W1", std::make_shared<Linear>(4 * o.embed_dim, o.hidden1));
  W2 = register_module("W2", std::make_shared<Linear>(o.hidden1, o.hidden2));
  W3 = register_module("W3", std::make_shared<Linear>(o.hidden2, 1));
}

std::string DINActivationUnit::extra_repr() const {
  return cat(options.embed_dim, ", hidden=(", options.hidden1, ", ", options.hidden2, ")");
}

// [docs:din]
DINResult DINActivationUnit::forward(const Variable& behaviours, const Variable& candidate,
                                     const std::vector<int64_t>& lengths) {
  const int64_t H = options.embed_dim;
  check(behaviours.dim() == 3 && behaviours.size(2) == H, name(), ": expected behaviours of shape (B, S, ", H, "), got ",
        behaviours.shape());
  const int64_t B = behaviours.size(0), S = behaviours.size(1);
  check(candidate.shape() == Shape{B, H}, name(), ": expected a candidate of shape [", B, ", ", H, "], got ",
        candidate.shape());
  check(lengths.empty() || static_cast<int64_t>(lengths.size()) == B, name(), ": expected ", B, " lengths, got ",
        lengths.size());
  for (int64_t n : lengths) check(n >= 1 && n <= S, name(), ": expected lengths in 1..", S, ", got ", n);

  // The candidate beside every behaviour: (B, 1, H) broadcast against zeros (B, S, H), whose
  // backward sums the S copies' gradients back into the one candidate.
  const Variable c = unsqueeze(candidate, 1) + Variable(zeros({B, S, H}));              // (B, S, H)
  const Variable x = concat({behaviours, c, behaviours - c, behaviours * c}, 2);        // (B, S, 4H)
  const Variable hidden = sigmoid(W2->forward(sigmoid(W1->forward(x))));                 // (B, S, A2)
  Variable w = reshape(W3->forward(hidden), {B, S});                                    // (B, S)
  // Padding takes no part: its weight is 0 (a mask of 1s and 0s, not a softmax).
  if (!lengths.empty()) w = w * Variable(real(1) - padding_mask(lengths, S));
  const Variable u = soft_context(w, behaviours);                                       // sum_s w_s b_s (B, H)
  return {u, w};
}
// [docs:end]

}  // namespace seqgrad::nn
