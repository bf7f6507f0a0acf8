// tests/nn/test_transformer.cpp - multi-head attention, positional encodings, Transformer layers
// and the model: shapes, PyTorch's parameter names, masks (exact zeros, no NaN, padding and
// causality do not leak), the positional formula, decoding (beam 1 = greedy, cached = uncached),
// pinned error messages, and a tiny Transformer that learns to copy.
#include <algorithm>
#include <cmath>
#include <set>

#include "nn/core/checkpoint.h"
#include "nn/decoding/decoding.h"
#include "nn/transformer/transformer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

std::vector<std::string> names(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [n, p] : m.named_parameters()) out.push_back(n);
  return out;
}

bool all_finite(const Tensor& t) {
  for (real v : t.to_vector())
    if (!std::isfinite(v)) return false;
  return true;
}

// Random ids in 4..V-1 (no special tokens) of the given shape.
Tensor random_ids(const Shape& shape, int64_t V) {
  return map(rand(shape), [V](real u) { return static_cast<real>(4 + static_cast<int64_t>(u * static_cast<real>(V - 4))); });
}

}  // namespace

// ================================================================================================
// MultiHeadAttention

TEST_CASE("MultiHeadAttention: PyTorch's names, shapes and initialisation; output and per-head weights") {
  manual_seed(1);
  nn::MultiHeadAttention mha(8, 2);
  CHECK(names(mha) == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(mha.in_proj_weight.shape() == Shape{24, 8});
  CHECK(mha.in_proj_bias.shape() == Shape{24});
  CHECK(mha.head_dim == 4);
  CHECK(max(abs(mha.in_proj_bias.value())).item() == 0);
  CHECK(max(abs(mha.out_proj->bias.value())).item() == 0);
  const real bound = std::sqrt(real(6) / real(8 + 24));  // xavier_uniform over (3C, C)
  CHECK(max(abs(mha.in_proj_weight.value())).item() <= bound);
  CHECK(max(abs(mha.in_proj_weight.value())).item() > real(0.8) * bound);
  CHECK(mha.to_string() ==
        "MultiHeadAttention(embed_dim=8, num_heads=2, dropout=0, bias=true,\n  (out_proj): Linear(in_features=8, out_features=8, bias=true)\n)");
  CHECK(mha.extra_repr() == "embed_dim=8, num_heads=2, dropout=0, bias=true");
  CHECK(names(nn::MultiHeadAttention(8, 2, 0, /*bias=*/false)) == std::vector<std::string>{"in_proj_weight", "out_proj.weight"});

  const Variable q(randn({3, 5, 8})), kv(randn({3, 7, 8}));
  const nn::MultiHeadAttentionResult r = mha.forward(q, kv, kv, Tensor(), Tensor(), /*need_weights=*/true);
  CHECK(r.output.shape() == Shape{3, 5, 8});
  CHECK(r.weights.shape() == Shape{3, 2, 5, 7});
  CHECK(allclose(sum(r.weights.value(), -1), ones({3, 2, 5}), 1e-5));
  CHECK_FALSE(mha.forward(q, kv, kv).weights.defined());
}

TEST_CASE("MultiHeadAttention is softmax(q k^T / sqrt(HS)) v per head, joined and projected") {
  manual_seed(2);
  nn::MultiHeadAttention mha(4, 2);
  for (auto& p : mha.parameters()) p.value().copy_(randn(p.shape()));
  const Tensor x = randn({1, 3, 4});
  const Tensor got = mha.forward(Variable(x), Variable(x), Variable(x)).output.value();
  // By hand, head by head, with plain tensor ops.
  const Tensor W = mha.in_proj_weight.value(), b = mha.in_proj_bias.value();
  const Tensor xs = x.reshape({3, 4});
  std::vector<Tensor> heads;
  for (int64_t h = 0; h < 2; ++h) {
    auto proj = [&](int64_t part) {
      const int64_t r0 = part * 4 + h * 2;
      return matmul(xs, slice(W, 0, r0, r0 + 2), false, true) + slice(b, 0, r0, r0 + 2);  // (3, 2)
    };
    const Tensor w = softmax(matmul(proj(0), proj(1), false, true) / std::sqrt(real(2)), -1);  // (3, 3)
    heads.push_back(matmul(w, proj(2)));                                                        // (3, 2)
  }
  const Tensor want = matmul(concat(heads, 1), mha.out_proj->weight.value(), false, true) + mha.out_proj->bias.value();
  CHECK(allclose(got.reshape({3, 4}), want, 1e-5));
}

TEST_CASE("masked positions get exactly zero weight: key padding and causal masks combined") {
  manual_seed(3);
  nn::MultiHeadAttention mha(8, 2);
  const Variable x(randn({2, 4, 8}));
  const Tensor kpm = nn::padding_mask({4, 2}, 4), causal = nn::causal_mask(4);
  const Tensor w = mha.forward(x, x, x, kpm, causal, true).weights.value();  // (2, 2, 4, 4)
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 4; ++t) {
        real row = 0;
        for (int64_t s = 0; s < 4; ++s) {
          const bool masked = s > t || (b == 1 && s >= 2);
          if (masked) CHECK(w.at({b, h, t, s}) == 0);
          else CHECK(w.at({b, h, t, s}) > 0);
          row += w.at({b, h, t, s});
        }
        CHECK(row == doctest::Approx(1));
      }
}

TEST_CASE("a long causal self-attention, taken in query blocks: zero weights above the diagonal, no leak from the future") {
  manual_seed(5);
  nn::MultiHeadAttention mha(8, 2, /*dropout=*/0.25);
  const int64_t T = 128;  // 4 query blocks of 32 (nn/attention/attention.h, query_block)
  const Tensor causal = nn::causal_mask(T), x = randn({1, T, 8});
  mha.eval();
  const nn::MultiHeadAttentionResult r = mha.forward(Variable(x), Variable(x), Variable(x), Tensor(), causal, true);
  const Tensor w = r.weights.value();  // (1, 2, T, T), assembled from the blocks
  CHECK(w.shape() == Shape{1, 2, T, T});
  for (int64_t t = 0; t < T; t += 9) {
    real row = 0;
    for (int64_t s = 0; s < T; ++s) row += w.at({0, 1, t, s});
    CHECK(row == doctest::Approx(1));
    CHECK(w.at({0, 1, t, t}) > 0);
    if (t + 1 < T) CHECK(w.at({0, 1, t, T - 1}) == 0);
  }
  // Changing the last 40 positions leaves the outputs of the first 88 as they were.
  Tensor later = x.clone();
  for (int64_t i = 88 * 8; i < T * 8; ++i) later.data()[i] += 1;
  const Tensor out2 = mha.forward(Variable(later), Variable(later), Variable(later), Tensor(), causal).output.value();
  CHECK(allclose(slice(out2, 1, 0, 88), slice(r.output.value(), 1, 0, 88), 1e-6));
  CHECK_FALSE(allclose(slice(out2, 1, 88, T), slice(r.output.value(), 1, 88, T), 1e-3));
  // Training, with dropout on each block's weights: finite gradients for every parameter.
  mha.train();
  Variable xv(x, true);
  const Variable y = mha.forward(xv, xv, xv, Tensor(), causal).output;
  sum(y * y).backward();
  CHECK(all_finite(xv.grad()));
  for (auto& p : mha.parameters()) CHECK(all_finite(p.grad()));
}

TEST_CASE("a fully masked row: zero weights, finite output and gradients") {
  manual_seed(4);
  nn::MultiHeadAttention mha(8, 2);
  Variable q(randn({2, 3, 8}), true), kv(randn({2, 4, 8}), true);
  const Tensor kpm = from_vector({0, 0, 1, 1, 1, 1, 1, 1}, {2, 4});  // the second sequence has no keys
  const nn::MultiHeadAttentionResult r = mha.forward(q, kv, kv, kpm, Tensor(), true);
  CHECK(max(abs(slice(r.weights.value(), 0, 1, 2))).item() == 0);
  CHECK(all_finite(r.output.value()));
  sum(r.output * r.output).backward();
  CHECK(all_finite(q.grad()));
  CHECK(all_finite(kv.grad()));
  for (auto& p : mha.parameters()) CHECK(all_finite(p.grad()));
}

TEST_CASE("the KV cache: attending to cached keys equals attending to all at once") {
  manual_seed(5);
  nn::MultiHeadAttention mha(8, 2);
  const Variable x(randn({2, 5, 8}));
  const Tensor full = mha.forward(x, x, x, Tensor(), nn::causal_mask(5)).output.value();
  nn::KVCache cache;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < 5; ++t) {
    const Variable xt = slice(x, 1, t, t + 1);
    steps.push_back(mha.forward(xt, xt, xt, cache, nn::CacheMode::Append).output.value());
    CHECK(cache.length() == t + 1);
  }
  CHECK(allclose(concat(steps, 1), full, 1e-5));
  // Static: projected once, then reused even when no keys are passed.
  nn::KVCache memory_cache;
  const Variable m(randn({2, 3, 8})), q(randn({2, 1, 8}));
  const Tensor a = mha.forward(q, m, m, memory_cache, nn::CacheMode::Static).output.value();
  const Tensor b = mha.forward(q, Variable(), Variable(), memory_cache, nn::CacheMode::Static).output.value();
  CHECK(a.to_vector() == b.to_vector());
  CHECK(memory_cache.length() == 3);
}

// ================================================================================================
// Positional encodings

TEST_CASE("sinusoidal encoding: PE(p, 2i) = sin(p / 10000^(2i/C)), PE(p, 2i+1) = cos(...)") {
  const Tensor pe = nn::sinusoidal_table(50, 6);
  CHECK(pe.shape() == Shape{50, 6});
  for (int64_t p : {0, 1, 7, 49})
    for (int64_t i = 0; i < 3; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(i) / 6.0);
      CHECK(pe.at({p, 2 * i}) == doctest::Approx(std::sin(angle)).epsilon(1e-6));
      CHECK(pe.at({p, 2 * i + 1}) == doctest::Approx(std::cos(angle)).epsilon(1e-6));
    }
  CHECK(pe.at({0, 0}) == 0);
  CHECK(pe.at({0, 1}) == 1);
  CHECK(nn::sinusoidal_table(3, 5).at({2, 4}) == doctest::Approx(std::sin(2.0 / std::pow(10000.0, 4.0 / 5.0))));
  // PE(p + k) is PE(p) rotated pair by pair by the angle k * w_i: a linear map independent of p.
  const int64_t k = 3;
  for (int64_t p : {2, 20})
    for (int64_t i = 0; i < 3; ++i) {
      const double w = k / std::pow(10000.0, 2.0 * static_cast<double>(i) / 6.0);
      const double s = pe.at({p, 2 * i}), c = pe.at({p, 2 * i + 1});
      CHECK(pe.at({p + k, 2 * i}) == doctest::Approx(s * std::cos(w) + c * std::sin(w)).epsilon(1e-5));
      CHECK(pe.at({p + k, 2 * i + 1}) == doctest::Approx(c * std::cos(w) - s * std::sin(w)).epsilon(1e-5));
    }
}

TEST_CASE("positional encodings add rows offset.. to the input; the table is a buffer, the learned one a parameter") {
  nn::SinusoidalPositionalEncoding pe(4, 10);
  CHECK(pe.named_buffers().size() == 1);
  CHECK(pe.named_buffers()[0].first == "pe");
  CHECK(pe.parameters().empty());
  const Tensor y = pe.forward(Variable(zeros({2, 3, 4})), /*offset=*/5).value();
  CHECK(allclose(slice(y, 0, 1, 2).reshape({3, 4}), slice(nn::sinusoidal_table(10, 4), 0, 5, 8)));
  nn::LearnedPositionalEncoding learned(4, 10);
  CHECK(names(learned) == std::vector<std::string>{"weight"});
  CHECK(allclose(learned.forward(Variable(zeros({1, 2, 4})), 1).value().reshape({2, 4}),
                 slice(learned.weight.value(), 0, 1, 3)));
}

// ================================================================================================
// Layers, stacks, the model

TEST_CASE("encoder and decoder layers and stacks: PyTorch's parameter names and shapes") {
  const auto o = nn::TransformerLayerOptions(8, 2).with_dim_feedforward(16);
  const std::vector<std::string> attn{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
  std::vector<std::string> enc;
  for (const auto& a : attn) enc.push_back("self_attn." + a);
  for (const char* n : {"linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
                        "norm2.weight", "norm2.bias"})
    enc.push_back(n);
  CHECK(names(nn::TransformerEncoderLayer(o)) == enc);
  std::vector<std::string> dec;
  for (const auto& a : attn) dec.push_back("self_attn." + a);
  for (const auto& a : attn) dec.push_back("multihead_attn." + a);
  for (const char* n : {"linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
                        "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"})
    dec.push_back(n);
  CHECK(names(nn::TransformerDecoderLayer(o)) == dec);

  const std::vector<std::string> stack = names(nn::TransformerEncoder(o, 2));
  CHECK(stack.front() == "layers.0.self_attn.in_proj_weight");
  CHECK(stack[enc.size()] == "layers.1.self_attn.in_proj_weight");
  CHECK(stack.back() == "norm.bias");
  CHECK(names(nn::TransformerDecoder(o, 1, /*final_norm=*/false)).back() == "layers.0.norm3.bias");

  nn::TransformerEncoderLayer layer(o);
  CHECK(layer.forward(Variable(randn({3, 5, 8}))).shape() == Shape{3, 5, 8});
  nn::TransformerDecoderLayer dlayer(o);
  CHECK(dlayer.forward(Variable(randn({3, 4, 8})), Variable(randn({3, 5, 8})), nn::causal_mask(4)).shape() == Shape{3, 4, 8});
}

TEST_CASE("Transformer: names, shared or separate embeddings, logits shape") {
  manual_seed(6);
  const auto o = nn::TransformerOptions(12, 12).with_d_model(8).with_nhead(2).with_num_layers(1).with_dim_feedforward(16);
  nn::Transformer separate(o);
  const std::vector<std::string> n = names(separate);
  const std::set<std::string> all(n.begin(), n.end());
  for (const char* want : {"src_embed.weight", "tgt_embed.weight", "encoder.layers.0.self_attn.in_proj_weight",
                           "encoder.norm.weight", "decoder.layers.0.multihead_attn.out_proj.bias", "decoder.norm.bias",
                           "generator.weight", "generator.bias"})
    CHECK_MESSAGE(all.count(want) == 1, want);
  CHECK(separate.named_buffers()[0].first == "pos_encoding.pe");
  nn::Transformer shared(nn::TransformerOptions(o).with_share_embeddings(true));
  CHECK(shared.src_embed == shared.tgt_embed);
  CHECK(shared.num_parameters() == separate.num_parameters() - 12 * 8);
  nn::Transformer learned(nn::TransformerOptions(o).with_positional("learned").with_max_len(20));
  CHECK(learned.pos_encoding->named_parameters()[0].second.shape() == Shape{20, 8});

  const Tensor src = random_ids({3, 5}, 12), tgt = random_ids({3, 4}, 12);
  CHECK(separate.forward(src, {5, 3, 1}, tgt).shape() == Shape{3, 4, 12});
  // The <pad> row of an embedding is zero.
  CHECK(max(abs(slice(separate.src_embed->weight.value(), 0, 0, 1))).item() == 0);
}

TEST_CASE("Transformer: tie_embeddings makes the generator's weight the target table, one parameter trained by both ends") {
  manual_seed(6);
  const auto o = nn::TransformerOptions(12, 12).with_d_model(8).with_nhead(2).with_num_layers(1).with_dim_feedforward(16);
  nn::Transformer separate(o), tied(nn::TransformerOptions(o).with_tie_embeddings(true));
  CHECK(tied.num_parameters() == separate.num_parameters() - 12 * 8);  // V x C fewer
  const std::vector<std::string> n = names(tied);
  CHECK(std::count(n.begin(), n.end(), "generator.weight") == 0);  // saved once, as tgt_embed.weight
  CHECK(std::count(n.begin(), n.end(), "generator.bias") == 1);
  CHECK(tied.generator->weight.value().data() == tied.tgt_embed->weight.value().data());
  // Token 7 never enters the decoder: only the output projection reaches its row of the table.
  const Tensor src = from_vector({4, 5, 6, 4}, {2, 2}), tgt_in = from_vector({1, 5, 1, 5}, {2, 2});
  const Tensor tgt_out = from_vector({5, 2, 5, 2}, {2, 2});
  const auto row7 = [](const nn::Transformer& m) { return slice(m.tgt_embed->weight.grad(), 0, 7, 8); };
  for (nn::Transformer* m : {&separate, &tied})
    nn::cross_entropy(m->forward(src, {}, tgt_in), tgt_out).backward();
  CHECK(max(abs(row7(separate))).item() == 0);
  CHECK(max(abs(row7(tied))).item() > 0);
  // It learns, and a saved tied model loads into another as the same function.
  nn::Adam opt(tied.parameters(), nn::AdamOptions(real(0.01)));
  std::vector<real> losses;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    const Variable loss = nn::cross_entropy(tied.forward(src, {}, tgt_in), tgt_out);
    loss.backward();
    opt.step();
    losses.push_back(loss.value().item());
  }
  CHECK(losses.back() < losses.front() / 2);
  const seqgrad::testing::TempDir dir;
  const std::string path = dir.file("tied.safetensors");
  nn::save(tied, path);
  manual_seed(99);
  nn::Transformer again(nn::TransformerOptions(o).with_tie_embeddings(true));
  nn::load(again, path);
  tied.eval();
  again.eval();
  CHECK(again.forward(src, {}, tgt_in).value().to_vector() == tied.forward(src, {}, tgt_in).value().to_vector());
  CHECK_THROWS_WITH_AS(nn::Linear(8, 12).tie_weight(Variable(zeros({8, 12}))),
                       "Linear::tie_weight: expected a weight of shape (12, 8), got [8, 12]", std::invalid_argument);
}

TEST_CASE("padding and the future do not leak: results do not depend on them") {
  manual_seed(7);
  nn::Transformer model(nn::TransformerOptions(12, 12).with_d_model(8).with_nhead(2).with_num_layers(2).with_dim_feedforward(16));
  model.eval();
  NoGradGuard no_grad;
  // The same source alone, and padded inside a batch with a longer one.
  const Tensor a = from_vector({5, 9, 7}, {1, 3}), tgt = from_vector({1, 8, 4, 11}, {1, 4});
  const Tensor batch = from_vector({4, 6, 8, 10, 11, 5, 5, 9, 7, 0, 0, 0}, {2, 6});  // row 1 = a, padded
  const Tensor tgt2 = from_vector({1, 6, 6, 6, 1, 8, 4, 11}, {2, 4});               // row 1 = tgt
  const Tensor alone = model.forward(a, {3}, tgt).value();
  const Tensor padded = model.forward(batch, {6, 3}, tgt2).value();
  CHECK(allclose(slice(padded, 0, 1, 2), alone, 1e-5));
  // Changing target token 3 leaves the logits of positions 0..2 unchanged.
  Tensor changed = tgt.clone();
  changed.data()[3] = changed.data()[3] == 5 ? 6 : 5;
  const Tensor b = model.forward(a, {3}, changed).value();
  CHECK(allclose(slice(b, 1, 0, 3), slice(alone, 1, 0, 3), 1e-6));
  CHECK_FALSE(allclose(slice(b, 1, 3, 4), slice(alone, 1, 3, 4), 1e-6));
}

TEST_CASE("decode_step with the cache gives the logits of the full decoder, one position or a chunk at a time") {
  manual_seed(8);
  for (bool norm_first : {false, true}) {
    nn::Transformer model(nn::TransformerOptions(12, 12).with_d_model(8).with_nhead(2).with_num_layers(2)
                              .with_dim_feedforward(16).with_norm_first(norm_first));
    model.eval();
    const Tensor src = random_ids({2, 5}, 12), tgt = random_ids({2, 6}, 12);
    const nn::TransformerMemory memory = model.encode(src, {5, 2});
    const nn::TransformerStep full = model.decode(tgt, memory, {}, /*need_weights=*/true);
    nn::DecoderCache cache;
    std::vector<Tensor> logits, weights;
    for (int64_t t = 0; t < 4; ++t) {
      const nn::TransformerStep s = model.decode_step(slice(tgt, 1, t, t + 1), memory, cache, true);
      logits.push_back(s.logits.value());
      weights.push_back(s.cross_weights[1].value());
    }
    // The last two positions in one chunk.
    logits.push_back(model.decode_step(slice(tgt, 1, 4, 6), memory, cache).logits.value());
    CHECK(cache.length == 6);
    CHECK(allclose(concat(logits, 1), full.logits.value(), 1e-5));
    CHECK(allclose(concat(weights, 2), slice(full.cross_weights[1].value(), 2, 0, 4), 1e-5));
  }
}

// ================================================================================================
// Decoding

namespace {

// A tiny Transformer trained to copy sequences of 3-6 letters, shared by the tests below.
struct CopyModel {
  std::shared_ptr<nn::Transformer> model;
  data::EncodedPairs test;
  double accuracy = 0;
};

const CopyModel& copy_model() {
  static const CopyModel cm = [] {
    manual_seed(11);
    const auto opts = data::TaskOptions().with_lengths(3, 6).with_symbols(6);
    const auto train_pairs = data::make_pairs(data::Task::Copy, data::TaskOptions(opts).with_n(4000).with_seed(1));
    const auto test_pairs = data::make_pairs(data::Task::Copy, data::TaskOptions(opts).with_n(100).with_seed(2));
    data::Vocab vocab;
    for (char ch = 'a'; ch < 'a' + 6; ++ch) vocab.add(std::string(1, ch));
    const auto tok = data::Tokenization::Space;
    const data::EncodedPairs train = data::encode_pairs(train_pairs, vocab, tok, vocab, tok);
    CopyModel out;
    out.test = data::encode_pairs(test_pairs, vocab, tok, vocab, tok);
    // [docs:train_loop]
    out.model = std::make_shared<nn::Transformer>(nn::TransformerOptions(vocab.size(), vocab.size())
                                                      .with_d_model(32).with_nhead(2).with_num_layers(1)
                                                      .with_dim_feedforward(64).with_dropout(0)
                                                      .with_norm_first(true).with_share_embeddings(true));
    nn::Adam opt(out.model->parameters(), nn::AdamOptions(1).with_betas(real(0.9), real(0.98)).with_eps(real(1e-9)));
    nn::NoamLR schedule(opt, 32, /*warmup=*/100);
    std::vector<int64_t> lengths;
    for (const auto& s : train.src) lengths.push_back(static_cast<int64_t>(s.size()));
    const auto ce = nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad).with_label_smoothing(real(0.1));
    int64_t step = 0;
    for (uint64_t epoch = 0; step < 700; ++epoch)
      for (const auto& idx : data::make_batches(lengths, 32, epoch)) {
        if (++step > 700) break;
        const data::Batch b = train.batch(idx);
        Variable loss = nn::cross_entropy(out.model->forward(b.src, b.src_lengths, b.tgt_in), b.tgt_out, ce);
        opt.zero_grad();
        loss.backward();
        opt.step();
        schedule.step();
      }
    // [docs:end]
    std::vector<int64_t> src_lengths;
    for (const auto& s : out.test.src) src_lengths.push_back(static_cast<int64_t>(s.size()));
    const nn::DecodeResult r = nn::greedy_decode(*out.model, data::pad_sequences(out.test.src), src_lengths);
    int64_t right = 0;
    for (size_t i = 0; i < out.test.size(); ++i) right += r.tokens[i] == out.test.tgt[i];
    out.accuracy = static_cast<double>(right) / static_cast<double>(out.test.size());
    return out;
  }();
  return cm;
}

std::vector<int64_t> lengths_of(const std::vector<std::vector<int64_t>>& seqs) {
  std::vector<int64_t> out;
  for (const auto& s : seqs) out.push_back(static_cast<int64_t>(s.size()));
  return out;
}

}  // namespace

TEST_CASE("it learns: a tiny Transformer copies sequences of 3-6 letters after 700 steps") {
  CHECK(copy_model().accuracy >= 0.9);
}

TEST_CASE("beam size 1 equals greedy decoding; cached equals uncached; beam 4 still copies") {
  const CopyModel& cm = copy_model();
  const std::vector<std::vector<int64_t>> src(cm.test.src.begin(), cm.test.src.begin() + 30);
  const Tensor batch = data::pad_sequences(src);
  const std::vector<int64_t> lengths = lengths_of(src);
  const auto o = nn::DecodeOptions().with_max_len(10);
  const nn::DecodeResult greedy = nn::greedy_decode(*cm.model, batch, lengths, o);
  const nn::DecodeResult greedy_uncached = nn::greedy_decode(*cm.model, batch, lengths, nn::DecodeOptions(o).with_use_cache(false));
  const nn::DecodeResult beam1 = nn::beam_search(*cm.model, batch, lengths, nn::DecodeOptions(o).with_beam_size(1));
  const nn::DecodeResult beam4 = nn::beam_search(*cm.model, batch, lengths, nn::DecodeOptions(o).with_beam_size(4));
  const nn::DecodeResult beam4_uncached =
      nn::beam_search(*cm.model, batch, lengths, nn::DecodeOptions(o).with_beam_size(4).with_use_cache(false));
  CHECK(greedy.tokens == greedy_uncached.tokens);
  CHECK(greedy.tokens == beam1.tokens);
  CHECK(beam4.tokens == beam4_uncached.tokens);
  int64_t right = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    CHECK(beam1.log_probs[i] == doctest::Approx(greedy.log_probs[i]).epsilon(1e-6));
    CHECK(greedy.log_probs[i] < 0);
    right += beam4.tokens[i] == cm.test.tgt[i];
  }
  CHECK(right >= 27);
}

TEST_CASE("greedy and beam search on an untrained model: max_len stops them, and they still agree") {
  manual_seed(12);
  nn::Transformer model(nn::TransformerOptions(9, 9).with_d_model(8).with_nhead(2).with_num_layers(1).with_dim_feedforward(16));
  const Tensor src = random_ids({4, 5}, 9);
  const std::vector<int64_t> lengths{5, 4, 2, 1};
  const auto o = nn::DecodeOptions().with_max_len(7);
  const nn::DecodeResult g = nn::greedy_decode(model, src, lengths, o);
  const nn::DecodeResult b = nn::beam_search(model, src, lengths, nn::DecodeOptions(o).with_beam_size(1));
  CHECK(g.tokens == b.tokens);
  CHECK(g.tokens == nn::greedy_decode(model, src, lengths, nn::DecodeOptions(o).with_use_cache(false)).tokens);
  for (const auto& t : g.tokens) CHECK(t.size() <= 7);
  CHECK(model.is_training());  // decoding switched to eval() only while it ran
  const nn::DecodeResult b3 = nn::beam_search(model, src, lengths, nn::DecodeOptions(o).with_beam_size(3));
  CHECK(b3.tokens.size() == 4);
  CHECK(b3.tokens == nn::beam_search(model, src, lengths, nn::DecodeOptions(o).with_beam_size(3).with_use_cache(false)).tokens);
}

TEST_CASE("decoding returns the encoder-decoder attention of each output, per layer and head") {
  const CopyModel& cm = copy_model();
  const std::vector<std::vector<int64_t>> src(cm.test.src.begin(), cm.test.src.begin() + 3);
  const Tensor batch = data::pad_sequences(src);
  for (int64_t beam : {1, 3}) {
    CAPTURE(beam);
    const auto o = nn::DecodeOptions().with_max_len(10).with_need_weights(true).with_beam_size(beam);
    const nn::DecodeResult r = beam == 1 ? nn::greedy_decode(*cm.model, batch, lengths_of(src), o)
                                         : nn::beam_search(*cm.model, batch, lengths_of(src), o);
    REQUIRE(r.cross_attention.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      REQUIRE(r.cross_attention[i].size() == 1);  // one decoder layer
      const Tensor& w = r.cross_attention[i][0];
      const int64_t S = static_cast<int64_t>(src[i].size()), T = static_cast<int64_t>(r.tokens[i].size()) + 1;  // + <eos>
      CHECK(w.shape() == Shape{2, T, S});
      CHECK(allclose(sum(w, -1), ones({2, T}), 1e-5));
    }
  }
}

// ================================================================================================
// Errors

TEST_CASE("transformer errors") {
  CHECK_THROWS_WITH_AS(nn::MultiHeadAttention(10, 3), "MultiHeadAttention: expected embed_dim divisible by num_heads, got 10 and 3",
                       std::invalid_argument);
  nn::MultiHeadAttention mha(8, 2);
  const Variable x(zeros({2, 3, 8}));
  CHECK_THROWS_WITH_AS(mha.forward(Variable(zeros({2, 3, 6})), x, x), "MultiHeadAttention: expected query of shape (B, T, 8), got [2, 3, 6]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(mha.forward(x, Variable(zeros({1, 3, 8})), x),
                       "MultiHeadAttention: expected key of shape (2, S, 8), got [1, 3, 8]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(mha.forward(x, x, x, zeros({2, 4})),
                       "MultiHeadAttention: expected key_padding_mask of shape (B, S) = [2, 3], got [2, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(mha.forward(x, x, x, Tensor(), zeros({3, 2})),
                       "MultiHeadAttention: expected attn_mask of shape (T, S) = [3, 3], got [3, 2]", std::invalid_argument);
  nn::SinusoidalPositionalEncoding pe(8, 4);
  CHECK_THROWS_WITH_AS(pe.forward(x, 2), "SinusoidalPositionalEncoding: positions 2..4 are out of range for max_len 4",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(nn::Transformer(nn::TransformerOptions(10, 12).with_share_embeddings(true)),
                       "Transformer: share_embeddings needs one vocabulary, got sizes 10 and 12", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::TransformerEncoderLayer(nn::TransformerLayerOptions(8, 3)),
                       "TransformerEncoderLayer: expected d_model divisible by nhead, got d_model=8 and nhead=3",
                       std::invalid_argument);
  nn::Transformer model(nn::TransformerOptions(10, 10).with_d_model(8).with_nhead(2).with_num_layers(1));
  CHECK_THROWS_WITH_AS(model.forward(zeros({2, 3}), {3, 4}, zeros({2, 2})), "Transformer: expected source lengths in 1..3, got 4",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.forward(zeros({2, 3}), {}, zeros({3, 2})), "Transformer: expected target ids of shape (2, T), got [3, 2]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::beam_search(model, zeros({1, 3}), {}, nn::DecodeOptions().with_beam_size(0)),
                       "beam_search: expected beam_size >= 1, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::greedy_decode(model, zeros({3}), {}),
                       "greedy_decode: expected a batch of sources (B, ...): ids (B, S) or images (B, C, H, W), got [3]",
                       std::invalid_argument);
  // Decoding takes a batch of any shape; the model checks that it is the kind it reads.
  CHECK_THROWS_WITH_AS(nn::greedy_decode(model, zeros({2, 1, 3, 3}), {}),
                       "Transformer: expected source ids of shape (B, S), got [2, 1, 3, 3]", std::invalid_argument);
}

