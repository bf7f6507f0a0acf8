// tests/nn/test_grad_gnmt.cpp - gradcheck through the whole GNMT-style model (bidirectional
// bottom layer, residual stacks, attention from the bottom decoder layer), with respect to
// every parameter, residuals on and off. No new op: this checks the composition. Compiled in
// float32 and float64.
#include "nn/attention/gnmt.h"
#include "tests/test_util.h"

using namespace seqgrad;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("gnmt grad float64");
#else
TEST_SUITE_BEGIN("gnmt grad float32");
#endif

TEST_CASE("grad through GNMT, every parameter") {
  const Tensor src = from_vector({5, 6, 7, 6, 5, 0}, {2, 3});
  const Tensor tgt_in = from_vector({1, 7, 1, 6}, {2, 2});
  for (bool residual : {true, false}) {
    CAPTURE(residual);
    manual_seed(3);
    nn::GNMT model(nn::GNMTOptions(8, 8).with_num_layers(3).with_hidden_size(3).with_embed_dim(2).with_residual(residual));
    const GradcheckResult r =
        gradcheck_parameters([&] { return model.forward(src, {3, 2}, tgt_in).logits; }, model.parameters());
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_SUITE_END();
