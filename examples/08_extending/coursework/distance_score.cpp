// examples/08_extending/coursework/distance_score.cpp - a new attention score in one file,
// registered by name so that every attention model and `seqgrad train` can use it.
//
// The distance score: a key scores higher the closer it lies to the query, once the query is
// moved into key space,
//   e(q, k) = -|W q - k|^2 / tau          W (H_k, H_q) learned; tau, the temperature, an option
// Expanded, |W q - k|^2 = |W q|^2 - 2 (W q) . k + |k|^2: one matrix product and two norms,
// never the (B, T, S, H) tensor of differences.
//   query q (B, T, H_q), keys k (B, S, H_k) -> scores (B, T, S)
// Build the tool with it, and train a model that uses it:
//   make seqgrad EXTRA=examples/08_extending/coursework/distance_score.cpp
//   build/seqgrad train --task reverse --arch lstm-attn --attention distance --temperature 2 --out m.safetensors
#include <cmath>
#include <memory>

#include "seqgrad.h"

using namespace seqgrad;

// [docs:distance_score]
class DistanceScore : public nn::AttentionScore {
 public:
  explicit DistanceScore(const nn::ScoreOptions& o) : nn::AttentionScore(o), tau(o.settings.number("temperature")) {
    W = register_module("W", std::make_shared<nn::Linear>(o.query_size, o.key_size, /*bias=*/false));
  }
  std::string name() const override { return "DistanceScore"; }
  std::string extra_repr() const override { return cat(query_size, ", ", key_size, ", temperature=", tau); }

  Variable score(const Variable& q, const Variable& k) override {
    const Variable wq = W->forward(q);                                 // W q (B, T, H_k)
    const Variable qq = sum(wq * wq, -1, /*keepdim=*/true);            // |W q|^2 (B, T, 1)
    const Variable kk = unsqueeze(sum(k * k, -1), 1);                  // |k|^2 (B, 1, S)
    const Variable qk = matmul(wq, k, /*trans_a=*/false, /*trans_b=*/true);  // (W q) . k (B, T, S)
    return (qq - 2 * qk + kk) * (-1 / static_cast<real>(tau));        // -|W q - k|^2 / tau
  }

  double tau;
  std::shared_ptr<nn::Linear> W;
};

// The one line that makes "distance" a score, with its own option: --temperature on the
// tool's command line, "temperature" in a checkpoint's configuration.
SEQGRAD_REGISTER_SCORE(DistanceScore, "distance", "-|W q - k|^2 / temperature (a coursework example)",
                       nn::number_option("temperature", 1, 0.01, 100, "the distance score's temperature tau"))
// [docs:end]
