// nn/core/embedding.cpp - Embedding's table and lookup (the op itself is autograd's embedding()).
#include "nn/core/embedding.h"

#include <algorithm>

#include "nn/core/init.h"
#include "tensor/check.h"

namespace seqgrad::nn {

Embedding::Embedding(int64_t num, int64_t dim, int64_t pad) : num_embeddings(num), embedding_dim(dim), padding_idx(pad) {
  check(num > 0 && dim > 0, "Embedding: expected positive num_embeddings and embedding_dim, got ", num, " and ", dim);
  check_index(pad >= -1 && pad < num, "Embedding: padding_idx ", pad, " is out of range for ", num, " embeddings");
  Tensor w = Tensor::empty({num, dim});
  init::normal_(w);
  if (pad >= 0) std::fill(w.data() + pad * dim, w.data() + (pad + 1) * dim, real(0));
  weight = register_parameter("weight", w);
}

std::string Embedding::extra_repr() const {
  std::string s = cat(num_embeddings, ", ", embedding_dim);
  if (padding_idx >= 0) s += cat(", padding_idx=", padding_idx);
  return s;
}

Variable Embedding::forward(const Tensor& ids) { return embedding(weight, ids, padding_idx); }

}  // namespace seqgrad::nn
