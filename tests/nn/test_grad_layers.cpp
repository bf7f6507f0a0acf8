// tests/nn/test_grad_layers.cpp - gradcheck through every layer, with respect to its input and
// its parameters. Compiled twice, like tests/autograd/test_grad_ops.cpp: float32 and float64.
#include "nn/core/embedding.h"
#include "nn/core/layernorm.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("layer grad float64");
#else
TEST_SUITE_BEGIN("layer grad float32");
#endif

// [docs:linear_grad]
TEST_CASE("grad through Linear (input, weight, bias), 2-D and 3-D input") {
  manual_seed(1);
  nn::Linear lin(4, 3);
  for (const Shape& shape : {Shape{5, 4}, Shape{2, 3, 4}}) {
    CAPTURE(to_string(shape));
    CHECK_GRAD([&lin](const Vars& v) {
      lin.weight = v[1];
      lin.bias = v[2];
      return lin.forward(v[0]);
    }, {randn(shape), lin.weight.value(), lin.bias.value()});
  }
}
// [docs:end]

TEST_CASE("grad through Embedding, with a padding row that gets no gradient") {
  manual_seed(2);
  nn::Embedding emb(6, 3, /*padding_idx=*/0);
  const Tensor ids = from_vector({1, 0, 5, 1, 0, 2}, {2, 3});
  // Without padding the check is plain; with padding, the padding row's analytic gradient is
  // 0 by design (finite differences disagree there), so check the padding rule separately.
  nn::Embedding plain(6, 3);
  CHECK_GRAD([&plain, ids](const Vars& v) {
    plain.weight = v[0];
    return plain.forward(ids);
  }, {plain.weight.value()});
  Variable out = emb.forward(ids);
  sum(out * out).backward();
  const Tensor g = emb.weight.grad();
  for (int64_t c = 0; c < 3; ++c) CHECK(g.at({0, c}) == 0);
  CHECK(g.at({1, 0}) != 0);
}

TEST_CASE("grad through LayerNorm (input, weight, bias)") {
  manual_seed(3);
  nn::LayerNorm ln(5);
  CHECK_GRAD([&ln](const Vars& v) {
    ln.weight = v[1];
    ln.bias = v[2];
    return ln.forward(v[0]);
  }, {randn({2, 3, 5}), randn({5}), randn({5})});
}

TEST_CASE("grad through nll_loss and mse_loss") {
  manual_seed(4);
  const Tensor targets = from_vector({2, 0, 1, 0}, {2, 2});
  CHECK_GRAD([targets](const Vars& v) { return nn::nll_loss(log_softmax(v[0], -1), targets, /*ignore_index=*/0); },
             {randn({2, 2, 3})});
  CHECK_GRAD([](const Vars& v) { return nn::mse_loss(v[0], v[1]); }, {randn({3, 4}), randn({3, 4})});
}

TEST_SUITE_END();
