// tests/nn/test_transformer_torch.cpp - PyTorch's MultiheadAttention, Transformer layers and
// nn.Transformer agree with ours: the same weights, loaded by the same names, give the same
// outputs. The fixture comes from tests/fixtures/make_transformer_fixtures.py (run once with
// PyTorch; the test needs no Python).
#include <map>

#include "io/safetensors.h"
#include "nn/core/checkpoint.h"
#include "nn/transformer/transformer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

const std::map<std::string, Tensor>& fixture() {
  static const std::map<std::string, Tensor> f = [] {
    std::map<std::string, Tensor> out;
    for (auto& [name, t] : io::read_safetensors("tests/fixtures/transformer_torch.safetensors").tensors) out[name] = t;
    return out;
  }();
  return f;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Copies "<prefix>.<name>" from the fixture into every parameter of the module, and checks
// that the fixture holds no parameter under that prefix the module lacks.
void load_prefixed(nn::Module& module, const std::string& prefix) {
  const std::map<std::string, Tensor>& f = fixture();
  size_t loaded = 0;
  for (auto& [key, p] : module.named_parameters()) {
    const std::string& name = key;  // (C++17 lambdas, as in REQUIRE_MESSAGE, cannot capture a binding)
    const auto it = f.find(prefix + "." + name);
    REQUIRE_MESSAGE(it != f.end(), "missing " << prefix << "." << name);
    REQUIRE(it->second.shape() == p.shape());
    p.value().copy_(it->second);
    ++loaded;
  }
  size_t in_file = 0;
  for (auto& [name, t] : f)
    if (name.rfind(prefix + ".", 0) == 0 && (ends_with(name, "weight") || ends_with(name, "bias"))) ++in_file;
  CHECK(loaded == in_file);
}

const Tensor& at(const std::string& name) { return fixture().at(name); }

}  // namespace

TEST_CASE("MultiheadAttention matches PyTorch, per-head weights included") {
  nn::MultiHeadAttention mha(8, 2);
  load_prefixed(mha, "mha");
  mha.eval();
  const nn::MultiHeadAttentionResult r = mha.forward(Variable(at("mha.q")), Variable(at("mha.k")), Variable(at("mha.v")),
                                                     at("mha.kpm"), at("mha.attn_mask"), /*need_weights=*/true);
  CHECK(allclose(r.output.value(), at("mha.out"), 1e-5));
  CHECK(allclose(r.weights.value(), at("mha.weights"), 1e-6));
}

TEST_CASE("TransformerEncoderLayer and TransformerDecoderLayer match PyTorch, post-norm and norm_first") {
  for (bool norm_first : {false, true}) {
    const std::string tag = norm_first ? "pre" : "post";
    CAPTURE(tag);
    const auto o = nn::TransformerLayerOptions(8, 2).with_dim_feedforward(16).with_dropout(0).with_norm_first(norm_first);
    nn::TransformerEncoderLayer enc(o);
    load_prefixed(enc, "enc_" + tag);
    CHECK(allclose(enc.forward(Variable(at("src")), Tensor(), at("src_kpm")).value(), at("enc_" + tag + ".out"), 1e-5));
    nn::TransformerDecoderLayer dec(o);
    load_prefixed(dec, "dec_" + tag);
    const Variable out = dec.forward(Variable(at("tgt")), Variable(at("src")), at("causal"), Tensor(), Tensor(), at("src_kpm"));
    CHECK(allclose(out.value(), at("dec_" + tag + ".out"), 1e-5));
  }
}

TEST_CASE("encoder and decoder stacks match torch.nn.Transformer") {
  const auto o = nn::TransformerLayerOptions(8, 2).with_dim_feedforward(16).with_dropout(0);
  nn::TransformerEncoder encoder(o, 2);
  nn::TransformerDecoder decoder(o, 2);
  load_prefixed(encoder, "transformer.encoder");
  load_prefixed(decoder, "transformer.decoder");
  const Variable memory = encoder.forward(Variable(at("src")), Tensor(), at("src_kpm"));
  const Variable out = decoder.forward(Variable(at("tgt")), memory, at("causal"), Tensor(), Tensor(), at("src_kpm"));
  CHECK(allclose(out.value(), at("transformer.out"), 1e-5));
}
