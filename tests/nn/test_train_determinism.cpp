// tests/nn/test_train_determinism.cpp - training is bit-identical across thread counts.
//
// Small versions of bench_train's two workloads (an LSTM decoder with Luong attention and
// input feeding; a post-norm Transformer) take a few Adam steps on 1, 2 and 3 threads. Every
// kernel splits its work so that each output element is computed by one thread in a fixed
// order (gemm, reductions, the fused ops), so the losses and the final weights must agree to
// the bit, not merely to a tolerance.
#include <cstring>

#include "seqgrad.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

// Losses of `steps` Adam steps and the final parameters, for a model built by `make` and a
// loss computed by `loss_of` on random ids (the same ids for every thread count).
template <class Model, class Make, class LossOf>
std::pair<std::vector<real>, std::vector<Tensor>> train(int threads, Make make, LossOf loss_of, int steps) {
  set_num_threads(threads);
  manual_seed(11);
  std::shared_ptr<Model> model = make();
  nn::Adam opt(model->parameters(), nn::AdamOptions(real(1e-3)));
  std::vector<real> losses;
  for (int s = 0; s < steps; ++s) {
    Tensor src = zeros({16, 9}), tgt = zeros({16, 8});
    for (int64_t i = 0; i < src.numel(); ++i) src.data()[i] = static_cast<real>(4 + default_generator().randint(12));
    for (int64_t i = 0; i < tgt.numel(); ++i) tgt.data()[i] = static_cast<real>(4 + default_generator().randint(12));
    opt.zero_grad();
    Variable loss = loss_of(*model, src, tgt);
    loss.backward();
    opt.step();
    losses.push_back(loss.item());
  }
  std::vector<Tensor> params;
  for (const Variable& p : model->parameters()) params.push_back(p.value().clone());
  set_num_threads(1);
  return {losses, params};
}

template <class Result>
void check_bit_identical(const Result& a, const Result& b) {
  CHECK(a.first == b.first);  // losses, compared exactly
  REQUIRE(a.second.size() == b.second.size());
  for (size_t i = 0; i < a.second.size(); ++i) {
    CAPTURE(i);
    CHECK(std::memcmp(a.second[i].data(), b.second[i].data(), sizeof(real) * a.second[i].numel()) == 0);
  }
}

}  // namespace

TEST_CASE("training is bit-identical on 1, 2 and 3 threads: LSTM with Luong attention, Transformer") {
  const int64_t V = 16;
  auto make_lstm = [=] {
    return std::make_shared<nn::AttentionSeq2Seq>(nn::AttentionSeq2SeqOptions(V, V)
                                                      .with_cell("lstm")
                                                      .with_score("general")
                                                      .with_hidden_size(64)
                                                      .with_embed_dim(32));
  };
  auto lstm_loss = [](nn::AttentionSeq2Seq& m, const Tensor& src, const Tensor& tgt) {
    const std::vector<int64_t> lengths(static_cast<size_t>(src.size(0)), src.size(1));
    return cross_entropy(m.forward(src, lengths, tgt).logits, tgt);
  };
  const auto lstm1 = train<nn::AttentionSeq2Seq>(1, make_lstm, lstm_loss, 3);
  check_bit_identical(lstm1, train<nn::AttentionSeq2Seq>(2, make_lstm, lstm_loss, 3));
  check_bit_identical(lstm1, train<nn::AttentionSeq2Seq>(3, make_lstm, lstm_loss, 3));

  auto make_transformer = [=] {
    return std::make_shared<nn::Transformer>(
        nn::TransformerOptions(V, V).with_d_model(64).with_nhead(4).with_dim_feedforward(256).with_num_layers(2).with_dropout(0));
  };
  auto transformer_loss = [](nn::Transformer& m, const Tensor& src, const Tensor& tgt) {
    const std::vector<int64_t> lengths(static_cast<size_t>(src.size(0)), src.size(1));
    return cross_entropy(m.forward(src, lengths, tgt), tgt);
  };
  const auto tr1 = train<nn::Transformer>(1, make_transformer, transformer_loss, 3);
  check_bit_identical(tr1, train<nn::Transformer>(2, make_transformer, transformer_loss, 3));
  check_bit_identical(tr1, train<nn::Transformer>(3, make_transformer, transformer_loss, 3));
}
