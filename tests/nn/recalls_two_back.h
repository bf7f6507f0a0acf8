// tests/nn/recalls_two_back.h - the "it learns" run the recurrent layers share: at every step,
// output the token read two steps before (0 for the first two steps), impossible without a
// memory. Used by the built-in cells' tests (test_rnn.cpp) and a declared cell's
// (test_cell_params.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nn/core/embedding.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/recurrent/rnn.h"
#include "tests/test_util.h"

namespace seqgrad::testing {

// From manual_seed(4): an embedding of 5 tokens into 8, the layer `make` builds on `options`
// (input 8, hidden 32), and a head (32 -> 5), trained together by Adam (lr 0.01) on 300 batches
// of 32 random sequences of 8 tokens, with targets y_t = x_{t-2}. Returns the last batch's
// accuracy (before its step).
inline real recall_two_back(
    const std::function<std::shared_ptr<nn::RecurrentLayer>(const nn::RNNOptions& options)>& make) {
  const int64_t V = 5, T = 8, B = 32;
  manual_seed(4);
  nn::Embedding emb(V, 8);
  const std::shared_ptr<nn::RecurrentLayer> rnn = make(nn::RNNOptions(8, 32));
  nn::Linear head(32, V);
  std::vector<Variable> params = emb.parameters();
  for (auto* m : std::vector<nn::Module*>{rnn.get(), &head})
    for (const Variable& p : m->parameters()) params.push_back(p);
  nn::Adam opt(params, nn::AdamOptions(real(0.01)));
  real acc = 0;
  for (int step = 0; step < 300; ++step) {
    Tensor x = Tensor::empty({B, T}), y = zeros({B, T});
    for (int64_t i = 0; i < B * T; ++i) x.data()[i] = static_cast<real>(default_generator().randint(V));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 2; t < T; ++t) y.at({b, t}) = x.at({b, t - 2});
    Variable logits = head.forward(rnn->forward(emb.forward(x), nn::RNNState{}).output);  // (B, T, V)
    opt.zero_grad();
    nn::cross_entropy(logits, y).backward();
    opt.step();
    acc = mean(eq(argmax(logits.value(), -1), y)).item();
  }
  return acc;
}

}  // namespace seqgrad::testing
