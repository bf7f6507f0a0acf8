// tests/nn/test_attention_bias.cpp - the attention hook (nn/transformer/attention_hook.h): a bias
// on the logits and a transform of q and k, in training and in cached decoding; positional
// encodings' options. The checks marked "every registered encoding" run on whatever is linked
// in: sinusoidal and learned in the library's tests, and ALiBi, T5 buckets and rotary too when
// the coursework is linked (tests/examples/coursework.sh builds such a binary).
#include <cmath>

#include "nn/core/checkpoint.h"
#include "nn/decoding/model_kind.h"
#include "nn/transformer/language_model.h"
#include "nn/transformer/transformer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

// Random ids in 4..V-1 (no special tokens) of the given shape.
Tensor random_ids(const Shape& shape, int64_t V) {
  return map(rand(shape), [V](real u) { return static_cast<real>(4 + static_cast<int64_t>(u * static_cast<real>(V - 4))); });
}

// A hook of the test's own: a learned bias per head and distance j - i, clipped to [-2, 2],
// and queries scaled by (1 + position) (a transform that depends on the position, and is
// easy to compute by hand).
struct TableHook : nn::AttentionHook {
  Variable table{randn({2, 5}), true};  // (NH, 5)
  bool scale_queries = false;
  Variable attention_bias(const nn::AttentionSite& site, int64_t qf, int64_t T, int64_t kf, int64_t S) override {
    Tensor index = Tensor::empty({T * S});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s < S; ++s)
        index.data()[t * S + s] = static_cast<real>(std::clamp<int64_t>((kf + s) - (qf + t), -2, 2) + 2);
    return reshape(index_select(table, 1, index), {site.num_heads, T, S});
  }
  Variable transform_heads(const nn::AttentionSite&, const Variable& x, int64_t first) override {
    if (!scale_queries) return x;
    Tensor scale = Tensor::empty({x.size(2), 1});
    for (int64_t p = 0; p < x.size(2); ++p) scale.data()[p] = static_cast<real>(1 + first + p);
    return x * Variable(scale);
  }
};

// Every registered encoding, built as a Transformer of width 8 with 2 heads would build it.
std::vector<std::string> encodings() { return nn::positional_encodings().names(); }

}  // namespace

TEST_CASE("a hook's bias is added to each head's scaled logits, before the masks") {
  manual_seed(1);
  auto mha = std::make_shared<nn::MultiHeadAttention>(4, 2);
  auto hook = std::make_shared<TableHook>();
  const Variable x(randn({2, 3, 4}));
  const Tensor causal = nn::causal_mask(3);
  const nn::MultiHeadAttentionResult plain = mha->forward(x, x, x, Tensor(), causal, true);
  mha->attach(hook, /*causal=*/true);
  const nn::MultiHeadAttentionResult biased = mha->forward(x, x, x, Tensor(), causal, true);
  REQUIRE(biased.weights.shape() == Shape{2, 2, 3, 3});
  REQUIRE(biased.output.shape() == Shape{2, 3, 4});
  // softmax(logits + b) = softmax(logits) * exp(b), renormalised: check it weight by weight.
  const Tensor p = plain.weights.value(), w = biased.weights.value();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 3; ++t) {
        double total = 0;
        for (int64_t s = 0; s <= t; ++s) total += p.at({b, h, t, s}) * std::exp(hook->table.value().at({h, s - t + 2}));
        for (int64_t s = 0; s < 3; ++s) {
          const double expect = s > t ? 0 : p.at({b, h, t, s}) * std::exp(hook->table.value().at({h, s - t + 2})) / total;
          CHECK(w.at({b, h, t, s}) == doctest::Approx(expect).epsilon(1e-5));
        }
      }
  // A zero bias is plain attention again (within rounding: another path through the same math).
  hook->table.value().fill_(0);
  CHECK(allclose(mha->forward(x, x, x, Tensor(), causal).output.value(), plain.output.value(), 1e-5));
}

TEST_CASE("a hook sees absolute positions: cached self-attention equals attention over the whole sequence") {
  manual_seed(2);
  auto mha = std::make_shared<nn::MultiHeadAttention>(4, 2);
  auto hook = std::make_shared<TableHook>();
  hook->scale_queries = true;
  mha->attach(hook, true);
  mha->eval();
  const Variable x(randn({2, 5, 4}));
  const Tensor whole = mha->forward(x, x, x, Tensor(), nn::causal_mask(5)).output.value();
  nn::KVCache cache;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < 5; ++t) {
    const Variable xt = slice(x, 1, t, t + 1);
    steps.push_back(mha->forward(xt, xt, xt, cache, nn::CacheMode::Append).output.value());
  }
  CHECK(allclose(concat(steps, 1), whole, 1e-5));
}

TEST_CASE("hook errors: a bias of the wrong shape, a hook on attention over a fixed memory") {
  struct Wrong : nn::AttentionHook {
    Variable attention_bias(const nn::AttentionSite&, int64_t, int64_t T, int64_t, int64_t S) override {
      return Variable(zeros({T, S}));
    }
  };
  auto mha = std::make_shared<nn::MultiHeadAttention>(4, 2);
  mha->attach(std::make_shared<Wrong>(), false);
  const Variable x(randn({1, 3, 4}));
  CHECK_THROWS_WITH_AS(mha->forward(x, x, x), "MultiHeadAttention: expected an attention bias of shape (NH, T, S) = [2, 3, 3], got [3, 3]",
                       std::invalid_argument);
  nn::KVCache cache;
  CHECK_THROWS_WITH_AS(mha->forward(x, x, x, cache, nn::CacheMode::Static),
                       "MultiHeadAttention: a positional hook needs the positions of the keys; attach it to "
                       "self-attention (CacheMode::Append), not to attention over a fixed memory (CacheMode::Static)",
                       std::invalid_argument);
}

TEST_CASE("the Transformer attaches its encoding to every self-attention layer, causal in the decoder, not to cross-attention") {
  nn::Transformer model(nn::TransformerOptions(10, 10).with_d_model(8).with_nhead(2).with_num_layers(2).with_dim_feedforward(16));
  for (const auto& l : *model.encoder->layers) {
    CHECK(l->self_attn->hook == model.pos_encoding);
    CHECK_FALSE(l->self_attn->causal);
  }
  for (const auto& l : *model.decoder->layers) {
    CHECK(l->self_attn->hook == model.pos_encoding);
    CHECK(l->self_attn->causal);
    CHECK(l->multihead_attn->hook == nullptr);
  }
  nn::TransformerLM lm(nn::TransformerLMOptions(10).with_d_model(8).with_nhead(2).with_dim_feedforward(16));
  for (const auto& l : *lm.decoder->layers) CHECK((l->self_attn->hook == lm.pos_encoding && l->self_attn->causal));
  // Sinusoidal and learned act on the embeddings alone: no bias, q and k untouched.
  for (const std::string name : {"sinusoidal", "learned"}) {
    auto pe = nn::make_positional_encoding(name, nn::PositionalOptions(8, 16, 2));
    const Variable q(randn({1, 2, 3, 4}));
    CHECK_FALSE(pe->attention_bias({2, 4, false}, 0, 3, 0, 3).defined());
    CHECK(pe->transform_heads({2, 4, false}, q, 0).value().data() == q.value().data());
  }
}

TEST_CASE("positional encodings' options: the chosen one's only, defaults filled in, bad values refused") {
  // With nothing chosen, every encoding's options (for a program's flags); with one chosen, its own.
  nn::Settings chosen;
  chosen.set("positional", "sinusoidal");
  CHECK(nn::positional_options(&chosen).empty());
  CHECK(nn::positional_options(&chosen).size() <= nn::positional_options(nullptr).size());
  const auto& kind = nn::model_kind("transformer");
  std::vector<std::string> keys;
  for (const nn::Option& o : kind.options(&chosen)) keys.push_back(o.key);
  CHECK(std::find(keys.begin(), keys.end(), "positional") != keys.end());
  // An encoding of the test's own, with one option (an entry not registered: the registry's
  // names are the library's and the coursework's).
  struct Scaled : nn::PositionalEncoding {
    explicit Scaled(const nn::PositionalOptions& o) : nn::PositionalEncoding(o.d_model, o.max_len), k(o.settings.number("scale_k")) {}
    std::string name() const override { return "Scaled"; }
    using nn::PositionalEncoding::forward;
    Variable forward(const Variable& x, int64_t) override { return x * static_cast<real>(k); }
    double k;
  };
  const nn::PositionalEntry entry{"scaled", "x k", nn::build_positional_encoding<Scaled>,
                                  {nn::number_option("scale_k", 3, 1, 10, "k")}};
  auto built = std::dynamic_pointer_cast<Scaled>(nn::make_positional_encoding(entry, nn::PositionalOptions(4, 8)));
  REQUIRE(built);
  CHECK(built->k == 3);  // the default
  nn::Settings s;
  s.set("scale_k", 5.0);
  CHECK(std::dynamic_pointer_cast<Scaled>(nn::make_positional_encoding(entry, nn::PositionalOptions(4, 8, 1, s)))->k == 5);
  s.set("scale_k", 50.0);
  CHECK_THROWS_WITH_AS(nn::make_positional_encoding(entry, nn::PositionalOptions(4, 8, 1, s)),
                       doctest::Contains("positional encoding 'scaled': option 'scale_k' must be"),
                       std::invalid_argument);
  // An encoding without a PositionalOptions constructor is built from (d_model, max_len).
  CHECK(nn::build_positional_encoding<nn::LearnedPositionalEncoding>(nn::PositionalOptions(4, 8))->max_len == 8);
  // The chosen encoding's options are the kind's, once chosen; every encoding's before.
  for (const std::string& name : nn::positional_encodings().names()) {
    nn::Settings pick;
    pick.set("positional", name);
    CHECK(nn::positional_options(&pick).size() == nn::positional_encodings().get(name).options.size());
    std::vector<std::string> taken;
    for (const nn::Option& o : kind.options(&pick)) taken.push_back(o.key);
    for (const nn::Option& o : nn::positional_encodings().get(name).options)
      CHECK(std::find(taken.begin(), taken.end(), o.key) != taken.end());
  }
}

// ================================================================================================
// Every registered encoding

TEST_CASE("every registered encoding: shapes of its output, bias and transform") {
  for (const std::string& name : encodings()) {
    CAPTURE(name);
    manual_seed(3);
    auto pe = nn::make_positional_encoding(name, nn::PositionalOptions(8, 16, 2));
    const Variable x(randn({2, 5, 8}));
    CHECK(pe->forward(x, 3).shape() == Shape{2, 5, 8});
    for (bool causal : {false, true}) {
      const nn::AttentionSite site{2, 4, causal};
      const Variable bias = pe->attention_bias(site, 4, 1, 0, 5);  // step 4 alone, keys 0..4
      if (bias.defined()) {
        CHECK(bias.shape() == Shape{2, 1, 5});
        // Row 4 of the whole sequence's bias: positions are absolute.
        CHECK(allclose(bias.value(), slice(pe->attention_bias(site, 0, 5, 0, 5).value(), 1, 4, 5), 0, 0));
      }
      const Variable q(randn({2, 2, 3, 4}));
      CHECK(pe->transform_heads(site, q, 2).shape() == Shape{2, 2, 3, 4});
      CHECK(allclose(pe->transform_heads(site, q, 2).value(),
                     slice(pe->transform_heads(site, concat({Variable(zeros({2, 2, 2, 4})), q}, 2), 0).value(), 2, 2, 5),
                     1e-5));
    }
  }
}

TEST_CASE("every registered encoding: cached decoding equals uncached, a step or a chunk at a time") {
  for (const std::string& name : encodings()) {
    CAPTURE(name);
    manual_seed(4);
    nn::Transformer model(nn::TransformerOptions(12, 12).with_d_model(8).with_nhead(2).with_num_layers(2)
                              .with_dim_feedforward(16).with_positional(name).with_max_len(16));
    model.eval();
    const Tensor src = random_ids({2, 5}, 12), tgt = random_ids({2, 6}, 12);
    const nn::TransformerMemory memory = model.encode(src, {5, 2});
    const Tensor full = model.decode(tgt, memory).logits.value();
    nn::DecoderCache cache;
    std::vector<Tensor> logits;
    for (int64_t t = 0; t < 4; ++t) logits.push_back(model.decode_step(slice(tgt, 1, t, t + 1), memory, cache).logits.value());
    logits.push_back(model.decode_step(slice(tgt, 1, 4, 6), memory, cache).logits.value());
    CHECK(allclose(concat(logits, 1), full, 1e-5));
  }
}

TEST_CASE("every registered encoding: a Transformer learns a fixed batch, and saves and loads as the same function") {
  for (const std::string& name : encodings()) {
    CAPTURE(name);
    manual_seed(5);
    nn::Transformer model(nn::TransformerOptions(10, 10).with_d_model(16).with_nhead(2).with_num_layers(1)
                              .with_dim_feedforward(32).with_dropout(0).with_positional(name).with_max_len(16));
    // Reverse 8 sequences of 5 tokens: order matters, so positions must get through.
    const Tensor src = random_ids({8, 5}, 10);
    Tensor tgt_in = zeros({8, 6}), tgt_out = zeros({8, 6});
    for (int64_t b = 0; b < 8; ++b) {
      tgt_in.data()[b * 6] = 1;  // <bos>
      for (int64_t t = 0; t < 5; ++t) {
        const real y = src.data()[b * 5 + (4 - t)];
        tgt_out.data()[b * 6 + t] = y;
        tgt_in.data()[b * 6 + t + 1] = y;
      }
      tgt_out.data()[b * 6 + 5] = 2;  // <eos>
    }
    nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.01)));
    std::vector<real> losses;
    for (int step = 0; step < 60; ++step) {
      opt.zero_grad();
      const Variable loss = nn::cross_entropy(model.forward(src, {}, tgt_in), tgt_out);
      loss.backward();
      opt.step();
      losses.push_back(loss.value().item());
    }
    CHECK(losses.back() < losses.front() / 4);
    model.eval();
    const seqgrad::testing::TempDir dir;
    const std::string path = dir.file("model.safetensors");
    nn::save(model, path);
    manual_seed(99);
    nn::Transformer other(nn::TransformerOptions(10, 10).with_d_model(16).with_nhead(2).with_num_layers(1)
                              .with_dim_feedforward(32).with_dropout(0).with_positional(name).with_max_len(16));
    nn::load(other, path);
    other.eval();
    CHECK(allclose(other.forward(src, {}, tgt_in).value(), model.forward(src, {}, tgt_in).value(), 0, 0));
  }
}
