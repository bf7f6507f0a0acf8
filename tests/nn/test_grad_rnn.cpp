// tests/nn/test_grad_rnn.cpp - gradcheck through each recurrent cell and through the sequence
// layers (stacked, bidirectional, padded). Compiled in float32 and float64.
#include "nn/recurrent/gru.h"
#include "nn/recurrent/lstm.h"
#include "nn/recurrent/seq2seq.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("rnn grad float64");
#else
TEST_SUITE_BEGIN("rnn grad float32");
#endif

TEST_CASE("grad through one step of each cell: input, state and every weight") {
  manual_seed(1);
  const int64_t B = 2, C = 3, H = 2;
  for (const std::string type : {"rnn", "lstm", "gru"}) {
    CAPTURE(type);
    const int64_t G = (type == "rnn" ? nn::RNNCell::kGates : type == "lstm" ? nn::LSTMCell::kGates : nn::GRUCell::kGates) * H;
    CHECK_GRAD([type](const Vars& v) {
      // v: x (B, C), h, c (B, H), w_ih (G, C), w_hh (G, H), b_ih, b_hh (G)
      Variable gx = matmul(v[0], v[3], false, true) + v[5];
      nn::RNNState s{v[1], type == "lstm" ? v[2] : Variable()};
      nn::RNNState next = type == "rnn"    ? nn::RNNCell::step(gx, s, v[4], v[6], nn::RNNNonlinearity::Tanh)
                          : type == "lstm" ? nn::LSTMCell::step(gx, s, v[4], v[6])
                                           : nn::GRUCell::step(gx, s, v[4], v[6]);
      // Both outputs of the LSTM matter: check h and c together.
      return next.c.defined() ? concat({next.h, next.c}, 1) : next.h + v[2] * real(0);
    }, {randn({B, C}), randn({B, H}), randn({B, H}), randn({G, C}), randn({G, H}), randn({G}), randn({G})});
  }
}

TEST_CASE("grad through the sequence layers: 2 layers, bidirectional, padded lengths") {
  manual_seed(2);
  for (const std::string type : {"rnn", "lstm", "gru"}) {
    CAPTURE(type);
    std::shared_ptr<nn::RecurrentLayer> layer =
        nn::make_recurrent_layer(type, nn::RNNOptions(3, 2).with_num_layers(2).with_bidirectional(true));
    // With respect to the input and one weight of each kind of layer position.
    CHECK_GRAD([layer](const Vars& v) {
      layer->weights(1, 0)["weight_hh"] = v[1];
      nn::RNNResult r = layer->forward(v[0], nn::RNNState{}, {4, 2});
      return concat({reshape(r.output, {-1}), reshape(r.state.h, {-1})}, 0);
    }, {randn({2, 4, 3}), layer->weights(1, 0)["weight_hh"].value()});
  }
}

TEST_SUITE_END();
