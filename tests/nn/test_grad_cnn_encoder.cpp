// tests/nn/test_grad_cnn_encoder.cpp - gradcheck through CnnEncoder (the pixels and every
// convolution's weight and bias, with the 2-D positions concatenated or added) and through
// ImageToText's teacher-forced decoder (pixels to logits, attention on and off). Compiled in
// float32 and float64, like every test_grad_*.cpp.
#include "nn/vision/cnn_encoder.h"
#include "nn/vision/conv.h"
#include "nn/vision/image_to_text.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("cnn encoder grad float64");
#else
TEST_SUITE_BEGIN("cnn encoder grad float32");
#endif

TEST_CASE("grad through CnnEncoder: pixels, weights and biases, positions concatenated, added or one-hot") {
  for (nn::GridPosition position : {nn::GridPosition::Concat, nn::GridPosition::Add, nn::GridPosition::OneHot}) {
    manual_seed(7);
    auto options = nn::CnnEncoderOptions(2, {3, 4}).with_strides({2, 1}).with_position(position).with_position_features(2);
    if (position == nn::GridPosition::OneHot) options.with_one_hot_positions(3, 2);  // 5 x 4 -> 3 x 2
    nn::CnnEncoder enc(options);
    auto& c0 = static_cast<nn::Conv2d&>(*(*enc.convs)[0]);
    auto& c1 = static_cast<nn::Conv2d&>(*(*enc.convs)[2]);
    // Small weights and biases far from 0 keep every pre-activation away from the ReLU's kink,
    // where a finite difference would straddle the corner.
    CHECK_GRAD([&](const Vars& v) {
      c0.weight = v[1], c0.bias = v[2], c1.weight = v[3], c1.bias = v[4];
      const Variable m = enc.forward(v[0]);
      return m * m;  // squared, so the gradient depends on the positions added
    }, {randn({2, 2, 5, 4}), randn({3, 2, 3, 3}) * real(0.05), from_vector({0.9f, -0.8f, 0.7f}, {3}),
        randn({4, 3, 3, 3}) * real(0.05), from_vector({0.6f, -0.9f, 0.8f, 0.7f}, {4})});
  }
}

TEST_CASE("grad through ImageToText: from the pixels to the logits, with and without attention") {
  for (bool attention : {true, false}) {
    manual_seed(8);
    const auto encoder = nn::CnnEncoderOptions(1, {2}).with_strides({2}).with_position_features(2);
    nn::ImageToText model(nn::ImageToTextOptions(encoder, 5).with_embed_dim(3).with_hidden_size(4).with_attention_size(3)
                              .with_attention(attention));
    const Tensor tgt_in = from_vector({1, 3, 4, 1, 2, 3}, {2, 3});
    CHECK_GRAD([&](const Vars& v) {
      model.cell->weight_hh = v[1];
      const Variable memory = model.encoder->forward(v[0]);
      nn::RNNState state;
      Variable u = mean(memory, 1);
      std::vector<Variable> logits;
      for (int64_t t = 0; t < 3; ++t) logits.push_back(model.step(slice(tgt_in, 1, t, t + 1).reshape({2}), state, u, memory));
      return stack(logits, 1);
    }, {testing::randn_away_from_zero({2, 1, 4, 4}), model.cell->weight_hh.value()});
  }
}

TEST_SUITE_END();
