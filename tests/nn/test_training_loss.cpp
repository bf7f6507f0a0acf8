// tests/nn/test_training_loss.cpp - every model kind's training_loss is the cross-entropy of its
// logits at the positions that count.
//
// The sequence models project to the vocabulary only at the target positions that are not
// padding (projected_cross_entropy, nn/core/loss.h), and the attention decoders project all
// their steps at once instead of one step at a time. Neither may change what is learned: for
// every kind the tool can build, on a padded batch, the loss and every parameter's gradient
// equal those of cross_entropy(logits(...)) with ignore_index, to float rounding.
#include <map>
#include <string>
#include <vector>

#include "data/batch.h"
#include "nn/decoding/model_kind.h"
#include "nn/core/loss.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

// A small model of kind `name` (its other options at their defaults), for 11 source and 13
// target ids.
std::shared_ptr<nn::EncoderDecoder> small_model(const std::string& name, std::map<std::string, io::Json> given) {
  given.emplace("hidden", io::Json(8));
  given.emplace("dim", io::Json(8));
  given.emplace("heads", io::Json(2));
  given.emplace("ffn", io::Json(16));
  given.emplace("dropout", io::Json(0));
  const nn::ModelKind& kind = nn::model_kind(name);
  const nn::Settings settings = nn::resolve_options(
      kind, [&](const nn::Option& o) { return given.count(o.key) ? given.at(o.key) : io::Json(); },
      [](const nn::Option& o) { return o.key; });
  nn::ModelContext context;
  context.name = name;
  context.src_vocab = 11;
  context.tgt_vocab = 13;
  context.max_len = 8;
  return kind.build(settings, context);
}

std::vector<Tensor> gradients(nn::Module& m, Variable loss) {
  m.zero_grad();
  loss.backward();
  std::vector<Tensor> g;
  for (const Variable& p : m.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return g;
}

void check_equals_plain_loss(const std::string& name, const std::map<std::string, io::Json>& given = {}) {
  CAPTURE(name);
  manual_seed(21);
  const std::shared_ptr<nn::EncoderDecoder> model = small_model(name, given);
  nn::Module& m = model->module();
  // Three targets of 4, 1 and 2 tokens (and <eos>), padded to T = 5; sources of 3, 2 and 1.
  const data::Batch b = data::make_batch({{4, 5, 6}, {7, 8}, {9}}, {{4, 5, 6, 7}, {8}, {9, 10}});
  REQUIRE(b.tgt_out.shape() == Shape{3, 5});
  for (const real smoothing : {real(0), real(0.1)}) {
    CAPTURE(smoothing);
    const auto opt = nn::CrossEntropyOptions().with_ignore_index(0).with_label_smoothing(smoothing);
    const Variable picked = model->training_loss(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths, b.tgt_out, opt);
    const std::vector<Tensor> g_picked = gradients(m, picked);
    const Variable plain = nn::cross_entropy(model->logits(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths), b.tgt_out, opt);
    const std::vector<Tensor> g_plain = gradients(m, plain);
    CHECK(std::abs(picked.item() - plain.item()) < 1e-6);
    REQUIRE(g_picked.size() == g_plain.size());
    for (size_t k = 0; k < g_plain.size(); ++k) {
      CAPTURE(m.named_parameters()[k].first);
      REQUIRE(g_picked[k].defined() == g_plain[k].defined());
      if (g_plain[k].defined()) CHECK(max(abs(g_picked[k] - g_plain[k])).item() < 1e-6);
    }
  }
  // Every position's loss, as asked: padding included, shaped as the targets.
  const auto none = nn::CrossEntropyOptions().with_ignore_index(0).with_reduction(Reduction::None);
  CHECK(model->training_loss(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths, b.tgt_out, none).shape() == Shape{3, 5});
}

}  // namespace

TEST_CASE("training_loss equals the cross-entropy of the logits, loss and gradients, for every model kind") {
  for (const std::string& name : nn::model_names()) check_equals_plain_loss(name);
  // The attention decoders in both styles, with a local window, and the plain models' contexts.
  check_equals_plain_loss("gru-attn", {{"decoder", io::Json("bahdanau")}, {"attention", io::Json("additive")}});
  check_equals_plain_loss("lstm-attn", {{"window", io::Json("local-p")}});
  check_equals_plain_loss("lstm", {{"bidirectional", io::Json(true)}, {"layers", io::Json(2)}});
}

TEST_CASE("projected_cross_entropy: targets must match the features' (B, T)") {
  manual_seed(2);
  nn::Linear projection(4, 6);
  const Variable features(randn({2, 3, 4}));
  CHECK_THROWS_WITH_AS(nn::projected_cross_entropy(features, projection, from_vector({4, 5}, {1, 2}), nn::CrossEntropyOptions()),
                       "projected_cross_entropy: expected targets of shape (2, 3) for features of shape [2, 3, 4], got [1, 2]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::projected_cross_entropy(Variable(randn({6, 4})), projection, from_vector({4, 5}, {1, 2}),
                                                   nn::CrossEntropyOptions()),
                       "projected_cross_entropy: expected features of shape (B, T, F), got [6, 4]", std::invalid_argument);
}
