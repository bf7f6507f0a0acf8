// tests/nn/test_data_parallel.cpp - data parallelism: gradient shards, per-shard random streams,
// and data_parallel_backward (nn/optim/data_parallel.h): the summed gradient is the batch's, the
// bits depend on the number of shards and never on the number of threads, errors leave .grad
// alone, and the caller's precision and anomaly checks reach every shard.
#include <cstring>
#include <stdexcept>

#include "seqgrad.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), sizeof(real) * a.numel()) == 0;
}

// A small regression: y = x W^T + b, loss = mean((y - t)^2) over the rows given.
struct Regression {
  Variable w{randn({3, 4}), true}, b{randn({3}), true};
  Tensor x = randn({7, 4}), t = randn({7, 3});
  std::vector<Variable> parameters() const { return {w, b}; }
  Variable loss(int64_t r0, int64_t r1) const {
    const Variable d = linear(Variable(slice(x, 0, r0, r1)), w, b) - Variable(slice(t, 0, r0, r1));
    return mean(d * d);
  }
};

}  // namespace

TEST_CASE("data parallel: shard_range cuts n rows into fixed contiguous parts, the first n % R one row longer") {
  using nn::shard_range;
  CHECK(shard_range(7, 3, 0) == std::make_pair<int64_t, int64_t>(0, 3));
  CHECK(shard_range(7, 3, 1) == std::make_pair<int64_t, int64_t>(3, 5));
  CHECK(shard_range(7, 3, 2) == std::make_pair<int64_t, int64_t>(5, 7));
  CHECK(shard_range(64, 2, 1) == std::make_pair<int64_t, int64_t>(32, 64));
  CHECK(shard_range(2, 3, 2) == std::make_pair<int64_t, int64_t>(2, 2));  // fewer rows than shards: an empty part
  CHECK_THROWS_WITH_AS(shard_range(5, 2, 2), "shard_range: expected 0 <= k < shards and n >= 0, got n = 5, shards = 2, k = 2",
                       std::invalid_argument);
  // The seeds of the shards' streams differ between shards and between steps.
  CHECK(nn::shard_seed(1, 0) != nn::shard_seed(1, 1));
  CHECK(nn::shard_seed(1, 0) != nn::shard_seed(2, 0));
  CHECK(nn::shard_seed(1, 1) != nn::shard_seed(2, 0));
}

TEST_CASE("GradientShard: a thread's backward adds the gradients of leaves to its shard, and .grad stays") {
  manual_seed(1);
  Variable w(randn({3}), true);
  w.set_grad(ones({3}));
  const Tensor before = w.grad().clone();
  GradientShard shard, inner;
  {
    const CollectGradients into(shard);
    const Variable h = w * w;  // not a leaf: its gradient is the graph's own business
    sum(h * 3.0f).backward();
    {
      const CollectGradients nested(inner);  // scopes nest: the innermost collects
      sum(w).backward();
    }
    sum(w).backward();  // back to `shard`, added to what it holds
  }
  CHECK(same_bits(w.grad(), before));
  const Tensor g = shard.take(w);
  REQUIRE(g.defined());
  for (int64_t i = 0; i < 3; ++i) CHECK(g.data()[i] == doctest::Approx(6 * w.value().data()[i] + 1));
  CHECK(inner.take(w).data()[0] == 1);
  CHECK_FALSE(shard.take(w).defined());  // taken: nothing left
  CHECK_THROWS_WITH_AS(shard.take(Variable()), "GradientShard::take: the Variable is undefined", std::invalid_argument);
  // Outside a scope, backward adds to .grad again.
  sum(w).backward();
  CHECK(w.grad().data()[0] == before.data()[0] + 1);
}

TEST_CASE("GeneratorScope: the thread draws from the scope's generator, and the process-wide one stays") {
  manual_seed(5);
  const Generator saved = default_generator();
  Generator mine(42), reference(42);
  double drawn = 0;
  {
    const GeneratorScope scope(mine);
    drawn = default_generator().uniform();
    const Tensor mask = rand({4});  // tensors draw from it too
    (void)mask;
  }
  CHECK(drawn == reference.uniform());
  CHECK(default_generator().state() == saved.state());  // not advanced
  CHECK(mine.state() != Generator(42).state());
}

TEST_CASE("data_parallel_backward: the shards' summed gradient is the batch's, added to the .grad already there") {
  manual_seed(2);
  Regression m;
  m.loss(0, 7).backward();  // the whole batch, one graph
  const Tensor gw = m.w.grad().clone(), gb = m.b.grad().clone();
  for (int64_t replicas : {1, 2, 3, 5, 7}) {
    CAPTURE(replicas);
    for (const Variable& p : m.parameters()) Variable(p).zero_grad();
    const std::vector<real> losses = nn::data_parallel_backward(m.parameters(), replicas, 0, [&](int64_t k) {
      const auto [r0, r1] = nn::shard_range(7, replicas, k);
      return m.loss(r0, r1) * (static_cast<real>(r1 - r0) / 7);  // each shard's share of the rows
    });
    REQUIRE(losses.size() == static_cast<size_t>(replicas));
    real total = 0;
    for (real l : losses) total += l;
    CHECK(total == doctest::Approx(m.loss(0, 7).item()).epsilon(1e-5));
    CHECK(allclose(m.w.grad(), gw, 1e-5, 1e-5));
    CHECK(allclose(m.b.grad(), gb, 1e-5, 1e-5));
  }
  // Added to a gradient already there (--accumulate): twice the batch's.
  nn::data_parallel_backward(m.parameters(), 2, 0, [&](int64_t k) {
    const auto [r0, r1] = nn::shard_range(7, 2, k);
    return m.loss(r0, r1) * (static_cast<real>(r1 - r0) / 7);
  });
  CHECK(allclose(m.w.grad(), gw * 2.0f, 1e-5, 1e-5));
  // A parameter no shard reaches keeps its .grad (here: none).
  Variable unused(zeros({2}), true);
  nn::data_parallel_backward({m.w, unused}, 2, 0, [&](int64_t k) { return m.loss(k * 3, k * 3 + 3); });
  CHECK_FALSE(unused.grad().defined());
}

TEST_CASE("data_parallel_backward: the same bits on 1, 2 and 3 threads for a fixed R, dropout drawing per shard") {
  // A Transformer with dropout, three Adam steps, each batch of 12 cut into R shards.
  auto run = [](int threads, int64_t replicas) {
    set_num_threads(threads);
    manual_seed(7);
    nn::Transformer model(nn::TransformerOptions(12, 12).with_d_model(32).with_nhead(2).with_dim_feedforward(64)
                              .with_num_layers(1).with_dropout(0.2f));
    nn::Adam opt(model.parameters(), nn::AdamOptions(real(1e-3)));
    std::vector<real> losses;
    for (int step = 0; step < 3; ++step) {
      Tensor src = zeros({12, 6}), tgt = zeros({12, 5});
      for (int64_t i = 0; i < src.numel(); ++i) src.data()[i] = static_cast<real>(4 + default_generator().randint(8));
      for (int64_t i = 0; i < tgt.numel(); ++i) tgt.data()[i] = static_cast<real>(4 + default_generator().randint(8));
      opt.zero_grad();
      const std::vector<real> parts = nn::data_parallel_backward(model.parameters(), replicas, step, [&](int64_t k) {
        const auto [r0, r1] = nn::shard_range(12, replicas, k);
        const Tensor s = slice(src, 0, r0, r1), t = slice(tgt, 0, r0, r1);
        return cross_entropy(model.forward(s, std::vector<int64_t>(static_cast<size_t>(r1 - r0), 6), t), t) *
               (static_cast<real>(r1 - r0) / 12);
      });
      opt.step();
      losses.insert(losses.end(), parts.begin(), parts.end());
    }
    std::vector<Tensor> weights;
    for (const Variable& p : model.parameters()) weights.push_back(p.value().clone());
    set_num_threads(1);
    return std::make_pair(losses, weights);
  };
  for (int64_t replicas : {2, 3}) {
    CAPTURE(replicas);
    const auto one = run(1, replicas);
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      const auto other = run(threads, replicas);
      CHECK(one.first == other.first);
      REQUIRE(one.second.size() == other.second.size());
      for (size_t i = 0; i < one.second.size(); ++i) CHECK(same_bits(one.second[i], other.second[i]));
    }
  }
  // The shards drew different dropout masks: two shards of the same rows give different losses.
  manual_seed(3);
  nn::Dropout dropout(0.5f);
  const Tensor x = ones({64});
  const std::vector<real> twins = nn::data_parallel_backward({}, 2, 9, [&](int64_t) {
    Variable v(x, true);
    return sum(dropout.forward(v));
  });
  CHECK(twins[0] != twins[1]);
  // ... and the same ones again for the same stream, whatever the process-wide generator did.
  manual_seed(4);
  const std::vector<real> again = nn::data_parallel_backward({}, 2, 9, [&](int64_t) {
    Variable v(x, true);
    return sum(dropout.forward(v));
  });
  CHECK(again == twins);
}

TEST_CASE("data_parallel_backward: errors name the shard and leave every .grad as it was") {
  manual_seed(2);
  Regression m;
  m.loss(0, 7).backward();
  const Tensor gw = m.w.grad().clone();
  CHECK_THROWS_WITH_AS(nn::data_parallel_backward(m.parameters(), 0, 0, [&](int64_t) { return m.loss(0, 7); }),
                       "data_parallel_backward: expected at least 1 replica, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::data_parallel_backward(m.parameters(), 2, 0,
                                                  [&](int64_t k) { return linear(Variable(m.x), m.w, m.b) * (k + 1.0f); }),
                       "data_parallel_backward: shard 0 must return a scalar loss, got shape [7, 3]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::data_parallel_backward(m.parameters(), 2, 0,
                                                  [&](int64_t k) {
                                                    if (k == 1) throw std::runtime_error("shard 1 failed");
                                                    return m.loss(0, 3);
                                                  }),
                       "shard 1 failed", std::runtime_error);
  CHECK(same_bits(m.w.grad(), gw));  // shard 0's backward went to its shard, never to .grad
}

TEST_CASE("data_parallel_backward: every shard runs at the caller's precision and under its anomaly checks") {
  manual_seed(6);
  Regression m;
  set_num_threads(2);  // two shards: one runs on a worker thread, not on this one
  std::vector<real> losses;
  Tensor direct;
  real direct_loss = 0, fp32_loss = 0;
  {
    const BFloat16Scope bf16;
    for (const Variable& p : m.parameters()) Variable(p).zero_grad();
    const Variable loss = m.loss(0, 7);
    loss.backward();
    direct = m.w.grad().clone();
    direct_loss = loss.item();
    for (const Variable& p : m.parameters()) Variable(p).zero_grad();
    losses = nn::data_parallel_backward(m.parameters(), 2, 0, [&](int64_t) { return m.loss(0, 7); });
  }
  fp32_loss = m.loss(0, 7).item();
  CHECK(direct_loss != fp32_loss);  // bfloat16 products do change the loss here
  CHECK(losses == std::vector<real>{direct_loss, direct_loss});
  CHECK(same_bits(m.w.grad(), direct * 2.0f));  // g + g, exactly 2 g
  {
    const DetectAnomalyGuard anomaly;
    const BFloat16Scope bf16;
    bool checked[2] = {false, false}, bfloat[2] = {false, false};
    nn::data_parallel_backward(m.parameters(), 2, 0, [&](int64_t k) {
      checked[k] = anomaly_enabled();
      bfloat[k] = matmul_precision() == MatmulPrecision::BFloat16;
      return m.loss(0, 7);
    });
    CHECK((checked[0] && checked[1] && bfloat[0] && bfloat[1]));
    CHECK_THROWS_WITH_AS(nn::data_parallel_backward(m.parameters(), 2, 0,
                                                    [&](int64_t) { return sum(log(Variable(zeros({2})) - 1.0f)); }),
                         doctest::Contains("detect_anomaly: forward of 'log' produced NaN"), std::runtime_error);
  }
  // ... and each thread has its own settings back afterwards.
  bool checked[2] = {true, true}, bfloat[2] = {true, true};
  nn::data_parallel_backward(m.parameters(), 2, 0, [&](int64_t k) {
    checked[k] = anomaly_enabled();
    bfloat[k] = matmul_precision() == MatmulPrecision::BFloat16;
    return m.loss(0, 7);
  });
  CHECK_FALSE((checked[0] || checked[1] || bfloat[0] || bfloat[1]));
  set_num_threads(1);
}
