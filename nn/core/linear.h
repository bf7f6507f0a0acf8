// nn/core/linear.h - Linear: y = x W^T + b, the layer every network is made of.
//
// weight (out_features, in_features) and bias (out_features), named and initialised as in
// PyTorch's nn.Linear: U(-1/sqrt(in), 1/sqrt(in)) for both (kaiming_uniform with a = sqrt(5)).
// Input (..., in_features) -> output (..., out_features): any leading axes pass through.
// Read next: embedding.h, activation.h.
#pragma once

#include "nn/core/module.h"

namespace seqgrad::nn {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  std::string name() const override { return "Linear"; }
  std::string extra_repr() const override;
  // x (..., in) -> (..., out)
  Variable forward(const Variable& x) override;
  // Weight tying (Press & Wolf, 2017): use `shared` (out, in) as the weight, another module's
  // parameter, typically an embedding table (V, C) as a C -> V projection. This layer then no
  // longer holds a weight of its own: `shared` is trained and saved once, under the owner's name
  // (as torch's named_parameters() lists a tied weight once).
  void tie_weight(const Variable& shared);

  int64_t in_features, out_features;
  Variable weight;  // (out, in)
  Variable bias;    // (out), undefined when bias = false
};

}  // namespace seqgrad::nn
