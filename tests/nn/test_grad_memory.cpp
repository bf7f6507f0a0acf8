// tests/nn/test_grad_memory.cpp - gradcheck through memory addressing: each NTM step, the
// write and the read, the whole address-write-address-read path, the heads, the NTM and MemN2N
// with respect to every parameter. Compiled in float32 and float64.
#include "nn/memory/memory.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::positive;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("memory grad float64");
#else
TEST_SUITE_BEGIN("memory grad float32");
#endif

namespace {
// Raw numbers -> head parameters in their ranges, as NTMHead does (softplus there, exp here).
nn::Addressing addressing_from(const Variable& key, const Variable& beta, const Variable& gate, const Variable& shift,
                               const Variable& gamma) {
  return {key, exp(beta), sigmoid(gate), softmax(shift, -1), 1 + exp(gamma)};
}
}  // namespace

TEST_CASE("grad through each addressing step: content, interpolation, shift, sharpening") {
  manual_seed(1);
  CHECK_GRAD([](const Vars& v) { return nn::content_addressing(v[0], v[1], v[2]); },
             {randn({2, 5, 3}), randn({2, 3}), positive({2, 1})});
  CHECK_GRAD([](const Vars& v) { return nn::interpolate(v[0], v[1], v[2]); }, {rand({2, 5}), rand({2, 5}), rand({2, 1})});
  CHECK_GRAD([](const Vars& v) { return nn::circular_shift(v[0], v[1]); }, {rand({2, 5}), rand({2, 3})});
  CHECK_GRAD([](const Vars& v) { return nn::circular_shift(v[0], v[1]); }, {rand({2, 5}), rand({2, 5})});  // R = 2 = N / 2
  CHECK_GRAD([](const Vars& v) { return nn::sharpen(v[0], v[1]); }, {positive({2, 5}), positive({2, 1})});
}

TEST_CASE("grad through a write and a read") {
  manual_seed(2);
  CHECK_GRAD([](const Vars& v) { return nn::memory_write(v[0], v[1], v[2], v[3]); },
             {randn({2, 4, 3}), rand({2, 4}), rand({2, 3}), randn({2, 3})});
  CHECK_GRAD([](const Vars& v) { return nn::memory_read(v[0], v[1]); }, {randn({2, 4, 3}), rand({2, 4})});
}

TEST_CASE("grad through the whole path: address, write, address again, read") {
  manual_seed(3);
  // v: memory, w_write, w_read, then key, beta, gate, shift, gamma for each head, erase, add
  const auto path = [](const Vars& v) {
    Variable w = nn::address(v[0], v[1], addressing_from(v[3], v[4], v[5], v[6], v[7]));
    Variable memory = nn::memory_write(v[0], w, sigmoid(v[13]), tanh(v[14]));
    Variable r = nn::address(memory, v[2], addressing_from(v[8], v[9], v[10], v[11], v[12]));
    return concat({nn::memory_read(memory, r), r}, 1);  // (B, W + N)
  };
  const int64_t B = 2, N = 5, W = 3;
  std::vector<Tensor> inputs{randn({B, N, W}), softmax(randn({B, N}), -1), softmax(randn({B, N}), -1)};
  for (int head = 0; head < 2; ++head)
    for (const Shape& s : {Shape{B, W}, Shape{B, 1}, Shape{B, 1}, Shape{B, 3}, Shape{B, 1}}) inputs.push_back(randn(s) * real(0.5));
  inputs.push_back(randn({B, W}));
  inputs.push_back(randn({B, W}));
  CHECK_GRAD(path, inputs);
}

TEST_CASE("grad through NTMHead, the NTM and MemN2N: every parameter") {
  manual_seed(4);
  nn::NTMHead head(/*controller_size=*/4, /*memory_width=*/3, /*shift_range=*/1, /*write=*/true);
  const Variable h(randn({2, 4}));
  auto emitted = [&] {
    const nn::NTMHeadOutput o = head.emit(h);
    const nn::Addressing& a = o.addressing;
    return concat({a.key, a.beta, a.gate, a.shift, a.gamma, o.erase, o.add}, 1);
  };
  GradcheckResult r = gradcheck_parameters(emitted, head.parameters());
  CHECK_MESSAGE(r.ok, r.message);
  CHECK_GRAD([&](const Vars& v) { return concat({head.emit(v[0]).addressing.shift, head.emit(v[0]).add}, 1); }, {randn({2, 4})});

  nn::NTM ntm(nn::NTMOptions(/*input_size=*/3, /*output_size=*/2).with_controller_size(5).with_memory(5, 3));
  const Variable x(randn({2, 3, 3}));
  r = gradcheck_parameters([&] { return ntm.forward_sequence(x).output; }, ntm.parameters());
  CHECK_MESSAGE(r.ok, r.message);
  CHECK_GRAD([&](const Vars& v) { return ntm.forward_sequence(v[0]).output; }, {randn({2, 3, 3})});

  nn::MemN2N memn2n(nn::MemN2NOptions(/*vocab_size=*/7, /*memory_size=*/3).with_embed_dim(4).with_hops(2));
  // <pad> (0) only fills empty slots, whose weight is 0: then the <pad> row, which by design
  // never receives a gradient (Embedding's padding_idx), also has no effect on the output.
  const Tensor story = from_vector({1, 2, 3, 4, 0, 0, 5, 6, 0, 0, 0, 0}, {2, 3, 2});
  const Tensor question = from_vector({2, 3, 4, 5}, {2, 2});
  for (bool linear : {false, true}) {
    CAPTURE(linear);
    memn2n.linear_start = linear;
    r = gradcheck_parameters([&] { return memn2n.forward(story, question).logits; }, memn2n.parameters());
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_SUITE_END();
