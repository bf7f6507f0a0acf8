// nn/core/embedding.h - Embedding: a lookup table from token ids to vectors.
//
// weight (num_embeddings, embedding_dim) ~ N(0, 1), as PyTorch's nn.Embedding. forward(ids)
// with ids of any shape (...) returns (..., embedding_dim). The row of padding_idx starts at
// zero and never receives a gradient, so <pad> stays a zero vector while training.
// Token ids are whole numbers stored as real (tensor/dtype.h).
#pragma once

#include "nn/core/module.h"

namespace seqgrad::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx = -1);
  std::string name() const override { return "Embedding"; }
  std::string extra_repr() const override;
  // ids (...) -> (..., embedding_dim)
  Variable forward(const Tensor& ids);
  Variable forward(const Variable& ids) override { return forward(ids.value()); }

  int64_t num_embeddings, embedding_dim, padding_idx;
  Variable weight;  // (V, C)
};

}  // namespace seqgrad::nn
