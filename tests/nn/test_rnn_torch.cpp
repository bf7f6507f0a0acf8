// tests/nn/test_rnn_torch.cpp - PyTorch's recurrent layers and ours agree: the same weights,
// loaded by the same names, give the same outputs and final states. The fixture file comes
// from tests/fixtures/make_rnn_fixtures.py (run once with PyTorch; the test needs no Python).
#include <map>

#include "io/safetensors.h"
#include "nn/core/checkpoint.h"
#include "nn/recurrent/rnn.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

std::map<std::string, Tensor> fixture() {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : io::read_safetensors("tests/fixtures/rnn_torch.safetensors").tensors) out[name] = t;
  return out;
}

// Copies "<prefix>.<name>" from the fixture into every parameter of the layer.
void load_prefixed(nn::Module& layer, const std::map<std::string, Tensor>& f, const std::string& prefix) {
  for (auto& [key, p] : layer.named_parameters()) {
    const std::string& name = key;  // (C++17 lambdas, as in REQUIRE_MESSAGE, cannot capture a binding)
    const auto it = f.find(prefix + "." + name);
    REQUIRE_MESSAGE(it != f.end(), "missing " << prefix << "." << name);
    REQUIRE(it->second.shape() == p.shape());
    p.value().copy_(it->second);
  }
}

}  // namespace

TEST_CASE("LSTM (2 layers, bidirectional), GRU and ReLU RNN match PyTorch") {
  const std::map<std::string, Tensor> f = fixture();
  const Variable x(f.at("x"));  // (2, 5, 4)
  nn::LSTM lstm(nn::RNNOptions(4, 3).with_num_layers(2).with_bidirectional(true));
  nn::GRU gru(nn::RNNOptions(4, 3));
  nn::RNN rnn(nn::RNNOptions(4, 3).with_num_layers(2).with_nonlinearity(nn::RNNNonlinearity::Relu));
  load_prefixed(lstm, f, "lstm");
  load_prefixed(gru, f, "gru");
  load_prefixed(rnn, f, "rnn");

  const nn::RNNResult a = lstm.forward(x, nn::RNNState{});
  CHECK(allclose(a.output.value(), f.at("lstm.out"), 1e-5));
  CHECK(allclose(a.state.h.value(), f.at("lstm.h_n"), 1e-5));
  CHECK(allclose(a.state.c.value(), f.at("lstm.c_n"), 1e-5));
  const nn::RNNResult b = gru.forward(x, nn::RNNState{});
  CHECK(allclose(b.output.value(), f.at("gru.out"), 1e-5));
  CHECK(allclose(b.state.h.value(), f.at("gru.h_n"), 1e-5));
  const nn::RNNResult c = rnn.forward(x, nn::RNNState{});
  CHECK(allclose(c.output.value(), f.at("rnn.out"), 1e-5));
  CHECK(allclose(c.state.h.value(), f.at("rnn.h_n"), 1e-5));

  // Padded batch (lengths 5, 3) against PyTorch's pack_padded_sequence.
  const nn::RNNResult p = lstm.forward(x, nn::RNNState{}, {5, 3});
  CHECK(allclose(p.output.value(), f.at("lstm_packed.out"), 1e-5));
  CHECK(allclose(p.state.h.value(), f.at("lstm_packed.h_n"), 1e-5));
  CHECK(allclose(p.state.c.value(), f.at("lstm_packed.c_n"), 1e-5));
}
