// tests/nn/test_grad_cell_params.cpp - the gradient through a layer whose cell declares its own
// parameters (tests/nn/mrnn_cell.h): the input and each declared weight, 2 layers, both
// directions, padded lengths. Runs in float32 and float64.
#include "tests/nn/mrnn_cell.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

TEST_SUITE_BEGIN("grad_cell_params");

TEST_CASE("gradcheck through a declared cell's layer: the input and each of its own weights") {
  manual_seed(3);
  testing::MRNN layer(nn::RNNOptions(3, 2).with_num_layers(2).with_bidirectional(true));
  CHECK_GRAD([&layer](const Vars& v) {
    layer.weights(1, 0)["weight_mh"] = v[1];
    layer.weights(0, 1)["weight_hm"] = v[2];
    const nn::RNNResult r = layer.forward(v[0], nn::RNNState{}, {4, 2});
    return concat({reshape(r.output, {-1}), reshape(r.state.h, {-1})}, 0);
  }, {randn({2, 4, 3}), layer.weights(1, 0)["weight_mh"].value(), layer.weights(0, 1)["weight_hm"].value()});
}

TEST_SUITE_END();
