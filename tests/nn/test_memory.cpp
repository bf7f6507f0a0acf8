// tests/nn/test_memory.cpp - memory addressing: each NTM step on worked cases, reads and writes,
// the NTM and MemN2N shapes, pinned errors, and "it learns" for both models.
#include "data/memory_tasks.h"
#include "nn/memory/memory.h"
#include "nn/optim/optim.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {
Variable row(const std::vector<real>& v) { return Variable(from_vector(v, {1, static_cast<int64_t>(v.size())})); }
Variable column(const std::vector<real>& v) { return Variable(from_vector(v, {static_cast<int64_t>(v.size()), 1})); }
}  // namespace

TEST_CASE("content addressing: the softmax of beta times the cosine, sharper as beta grows") {
  // Slot 1 points the same way as the key (twice as long), slot 2 is orthogonal, slot 0 opposite.
  const Variable memory(from_vector({-1, 0, 2, 0, 0, 3}, {1, 3, 2}));
  const Variable key = row({1, 0});
  const Tensor w1 = nn::content_addressing(memory, key, column({1})).value();
  const Tensor expected = softmax(from_vector({-1, 1, 0}, {1, 3}), -1);  // cosines -1, 1, 0
  CHECK(allclose(w1, expected, 1e-6));
  const Tensor w50 = nn::content_addressing(memory, key, column({50})).value();
  CHECK(w50.at({0, 1}) > real(0.999));
}

TEST_CASE("interpolation, circular shift and sharpening on worked cases") {
  const Variable content = row({real(0.7), real(0.2), real(0.1), 0}), prev = row({0, 0, 0, 1});
  CHECK(allclose(nn::interpolate(content, prev, column({1})).value(), content.value()));
  CHECK(allclose(nn::interpolate(content, prev, column({0})).value(), prev.value()));
  CHECK(allclose(nn::interpolate(content, prev, column({real(0.5)})).value(),
                 from_vector({real(0.35), real(0.1), real(0.05), real(0.5)}, {1, 4})));
  // s one-hot on +1 moves the focus one slot forward, wrapping from the last slot to the first
  CHECK(allclose(nn::circular_shift(content, row({0, 0, 1})).value(), from_vector({0, real(0.7), real(0.2), real(0.1)}, {1, 4})));
  CHECK(allclose(nn::circular_shift(prev, row({0, 0, 1})).value(), from_vector({1, 0, 0, 0}, {1, 4})));
  CHECK(allclose(nn::circular_shift(content, row({1, 0, 0})).value(), from_vector({real(0.2), real(0.1), 0, real(0.7)}, {1, 4})));
  // a shift range of 2 (5 moves): +2 lands two slots on, wrapping around
  CHECK(allclose(nn::circular_shift(row({0, 0, 0, 1, 0}), row({0, 0, 0, 0, 1})).value(), from_vector({1, 0, 0, 0, 0}, {1, 5})));
  // a spread kernel is a circular convolution: w~_i = sum_k s_k w_{i-k}
  const Tensor blur = nn::circular_shift(prev, row({real(0.25), real(0.5), real(0.25)})).value();
  CHECK(allclose(blur, from_vector({real(0.25), 0, real(0.25), real(0.5)}, {1, 4})));
  // gamma = 1 changes nothing; gamma = 2 squares and renormalises
  CHECK(allclose(nn::sharpen(content, column({1})).value(), content.value(), 1e-6));
  CHECK(allclose(nn::sharpen(content, column({2})).value(),
                 from_vector({real(0.49 / 0.54), real(0.04 / 0.54), real(0.01 / 0.54), 0}, {1, 4}), 1e-6));
  // Huge gamma on a flat weighting: a softmax inside, so no 0 / 0
  const Tensor flat = nn::sharpen(Variable(full({1, 16}, real(1) / 16)), column({500})).value();
  CHECK(allclose(flat, full({1, 16}, real(1) / 16), 1e-6));
}

TEST_CASE("address with g = 0 walks through memory by its shift, ignoring the key") {
  manual_seed(3);
  const Variable memory(randn({2, 5, 3}));
  const nn::Addressing a{Variable(randn({2, 3})), column({5, 5}), column({0, 0}), Variable(from_vector({0, 0, 1, 1, 0, 0}, {2, 3})),
                         column({10, 10})};
  Variable w(from_vector({1, 0, 0, 0, 0, 0, 0, 0, 0, 1}, {2, 5}));
  w = nn::address(memory, w, a);  // batch 0 moves forward, batch 1 back
  CHECK(allclose(w.value(), from_vector({0, 1, 0, 0, 0, 0, 0, 0, 1, 0}, {2, 5}), 1e-6));
}

TEST_CASE("memory_write erases then adds where w points; memory_read is the weighted sum") {
  const Variable memory(from_vector({1, 2, 3, 4, 5, 6}, {1, 3, 2}));
  const Variable w = row({0, 1, 0});
  const Tensor replaced = nn::memory_write(memory, w, row({1, 1}), row({9, 8})).value();
  CHECK(replaced.to_vector() == std::vector<real>{1, 2, 9, 8, 5, 6});
  const Tensor added = nn::memory_write(memory, w, row({0, 0}), row({1, 1})).value();
  CHECK(added.to_vector() == std::vector<real>{1, 2, 4, 5, 5, 6});
  // half a weight: M_i (1 - 0.5 e) + 0.5 a
  const Tensor half = nn::memory_write(memory, row({0, real(0.5), 0}), row({1, 0}), row({2, 2})).value();
  CHECK(allclose(half, from_vector({1, 2, real(2.5), 5, 5, 6}, {1, 3, 2})));
  CHECK(allclose(nn::memory_read(memory, row({real(0.5), 0, real(0.5)})).value(), from_vector({3, 4}, {1, 2})));
}

TEST_CASE("NTM and NTMHead: parameter names, shapes, weightings that sum to 1") {
  manual_seed(1);
  nn::NTMHead head(/*controller_size=*/5, /*memory_width=*/3, /*shift_range=*/2, /*write=*/true);
  const nn::NTMHeadOutput o = head.emit(Variable(randn({4, 5})));
  CHECK(head.linear->out_features == 3 + 1 + 1 + 5 + 1 + 6);
  CHECK(o.addressing.key.shape() == Shape{4, 3});
  CHECK(o.addressing.shift.shape() == Shape{4, 5});
  CHECK(-max(-o.addressing.gamma.value()).item() >= 1);
  CHECK(-max(-o.addressing.beta.value()).item() > 0);
  CHECK(o.erase.shape() == Shape{4, 3});
  CHECK_FALSE(nn::NTMHead(5, 3).emit(Variable(randn({4, 5}))).erase.defined());

  nn::NTM ntm(nn::NTMOptions(/*input_size=*/3, /*output_size=*/2).with_controller_size(6).with_memory(7, 4));
  std::vector<std::string> names;
  for (const auto& [name, p] : ntm.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"controller.weight", "controller.bias", "write_head.linear.weight",
                                          "write_head.linear.bias", "read_head.linear.weight", "read_head.linear.bias",
                                          "out.weight", "out.bias"});
  const nn::NTMResult r = ntm.forward_sequence(Variable(randn({2, 5, 3})));
  CHECK(r.output.shape() == Shape{2, 5, 2});
  CHECK(r.read_weights.shape() == Shape{2, 5, 7});
  CHECK(r.write_weights.shape() == Shape{2, 5, 7});
  CHECK(r.memory.shape() == Shape{2, 7, 4});
  CHECK(allclose(sum(r.read_weights.value(), -1), ones({2, 5}), 1e-5));
  CHECK(allclose(sum(r.write_weights.value(), -1), ones({2, 5}), 1e-5));
  CHECK(ntm.forward(Variable(randn({2, 5, 3}))).shape() == Shape{2, 5, 2});
}

TEST_CASE("MemN2N: shapes, one weighting per hop, zero weight on empty slots, linear start") {
  manual_seed(2);
  nn::MemN2N model(nn::MemN2NOptions(/*vocab_size=*/10, /*memory_size=*/4).with_embed_dim(6).with_hops(3));
  CHECK(model.named_parameters().front().first == "embeddings.0.weight");
  CHECK(model.named_parameters().back().first == "temporal.3.weight");
  CHECK(model.parameters().size() == 8);
  // two stories: 3 sentences and 1 sentence of up to 3 words
  const Tensor story = from_vector({4, 5, 6, 4, 7, 0, 8, 9, 6, 0, 0, 0,  //
                                    5, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                   {2, 4, 3});
  const Tensor question = from_vector({1, 4, 1, 5}, {2, 2});
  const nn::MemN2NResult r = model.forward(story, question);
  CHECK(r.logits.shape() == Shape{2, 10});
  REQUIRE(r.weights.size() == 3);
  for (const Variable& w : r.weights) {
    CHECK(w.shape() == Shape{2, 4});
    CHECK(allclose(sum(w.value(), -1), ones({2}), 1e-5));
    CHECK(w.value().at({0, 3}) == 0);
    CHECK(w.value().at({1, 1}) == 0);
    CHECK(w.value().at({1, 0}) == doctest::Approx(1));
  }
  model.linear_start = true;  // raw scores: not a distribution, but still 0 on empty slots
  const nn::MemN2NResult linear = model.forward(story, question);
  CHECK(linear.weights[0].value().at({0, 3}) == 0);
  CHECK(linear.weights[0].value().at({1, 0}) != doctest::Approx(1));
  CHECK(nn::MemN2N(nn::MemN2NOptions(10, 4).with_temporal(false)).parameters().size() == 4);
}

TEST_CASE("memory errors") {
  const Variable memory(zeros({2, 5, 3}));
  CHECK_THROWS_WITH_AS(nn::memory_read(Variable(zeros({5, 3})), Variable(zeros({2, 5}))),
                       "memory_read: expected a memory of shape (B, N, W), got [5, 3]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::memory_read(memory, Variable(zeros({2, 4}))),
                       "memory_read: expected a weighting of shape (2, 5), got [2, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::memory_write(memory, Variable(zeros({2, 5})), Variable(zeros({2, 3})), Variable(zeros({2, 4}))),
                       "memory_write: expected erase and add of shape (2, 3), got [2, 3] and [2, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::content_addressing(memory, Variable(zeros({2, 4})), Variable(ones({2, 1}))),
                       "content_addressing: expected a key of shape (2, 3), got [2, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::content_addressing(memory, Variable(zeros({2, 3})), Variable(ones({2}))),
                       "content_addressing: expected beta of shape (2, 1), got [2]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::interpolate(Variable(zeros({2, 5})), Variable(zeros({2, 6})), Variable(zeros({2, 1}))),
                       "interpolate: expected a previous weighting of shape (2, 5), got [2, 6]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::interpolate(Variable(zeros({2, 5})), Variable(zeros({2, 5})), Variable(zeros({1, 1}))),
                       "interpolate: expected a gate of shape (2, 1), got [1, 1]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::circular_shift(Variable(zeros({2, 5})), Variable(zeros({2, 2}))),
                       "circular_shift: expected shift weights of shape (2, 2R + 1) with 2R + 1 <= 5, got [2, 2]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::circular_shift(Variable(zeros({2, 3})), Variable(zeros({2, 5}))),
                       "circular_shift: expected shift weights of shape (2, 2R + 1) with 2R + 1 <= 3, got [2, 5]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::sharpen(Variable(zeros({5})), Variable(ones({1, 1}))),
                       "sharpen: expected a weighting of shape (B, N), got [5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::NTMHead(0, 3), "NTMHead: expected positive controller_size and memory_width and shift_range >= 0, got 0, 3 and 1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::NTM(nn::NTMOptions(3, 2).with_memory(2, 4)),
                       "NTM: expected a memory of N >= 2R + 1 slots of W > 0 numbers, got N = 2, W = 4, R = 1",
                       std::invalid_argument);
  nn::NTM ntm(nn::NTMOptions(3, 2));
  CHECK_THROWS_WITH_AS(ntm.forward_sequence(Variable(zeros({2, 3}))), "NTM: expected input of shape (B, T, 3) with T >= 1, got [2, 3]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ntm.forward_sequence(Variable(zeros({2, 0, 3}))),
                       "NTM: expected input of shape (B, T, 3) with T >= 1, got [2, 0, 3]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::MemN2N(nn::MemN2NOptions(10, 0)),
                       "MemN2N: expected vocab_size > 1 and positive memory_size, embed_dim and hops, got 10, 0, 32 and 3",
                       std::invalid_argument);
  nn::MemN2N model(nn::MemN2NOptions(10, 4));
  CHECK_THROWS_WITH_AS(model.forward(zeros({2, 5, 3}), zeros({2, 2})), "MemN2N: expected a story of shape (B, 4, L), got [2, 5, 3]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.forward(ones({2, 4, 3}), zeros({3, 2})), "MemN2N: expected a question of shape (2, Lq), got [3, 2]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.forward(zeros({2, 4, 3}), zeros({2, 2})), "MemN2N: story 0 has no sentence; expected at least one",
                       std::invalid_argument);
  CHECK_THROWS_AS(model.forward(full({1, 4, 3}, 10), zeros({1, 2})), std::out_of_range);  // a word id >= vocab_size
}

// ================================================================================================
// It learns

TEST_CASE("it learns: a one-hop memory network answers where-person questions") {
  const auto options = data::StoryOptions().with_sentences(2, 6);
  const auto train = data::make_stories(data::StoryTask::WherePerson, data::StoryOptions(options).with_n(4000).with_seed(1));
  const auto test = data::make_stories(data::StoryTask::WherePerson, data::StoryOptions(options).with_n(300).with_seed(2));
  const data::Vocab vocab = data::story_vocab(train);
  const data::EncodedStories test_data = data::encode_stories(test, vocab, 6);
  manual_seed(42);
  nn::MemN2N model(nn::MemN2NOptions(vocab.size(), 6).with_hops(1));
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.01)));
  for (int64_t step = 0; step < 400; ++step) {
    const std::vector<data::Story> batch(train.begin() + step * 10 % 3990, train.begin() + step * 10 % 3990 + 10);
    const data::EncodedStories b = data::encode_stories(batch, vocab, 6);
    Variable loss = nn::cross_entropy(model.forward(b.story, b.question).logits, b.answer);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  NoGradGuard no_grad;
  const nn::MemN2NResult r = model.forward(test_data.story, test_data.question);
  const real accuracy = mean(eq(argmax(r.logits.value(), -1), test_data.answer)).item();
  CHECK(accuracy > real(0.95));
  // ... and it reads the supporting sentence (the person's last move)
  const Tensor looked = argmax(r.weights[0].value(), -1);
  int64_t hits = 0;
  for (int64_t b = 0; b < test_data.size(); ++b) hits += looked.data()[b] == static_cast<real>(test[b].supporting[0]);
  CHECK(hits > 270);
}

TEST_CASE("it learns: an NTM copies short sequences of bit vectors") {
  const int64_t bits = 4;
  manual_seed(42);
  nn::NTM ntm(nn::NTMOptions(bits + 1, 2 * bits).with_controller_size(32).with_memory(8, 6));
  nn::Adam opt(ntm.parameters(), nn::AdamOptions(real(0.003)));
  Generator rng(1);
  auto loss_of = [&](const data::CopyBatch& b, const nn::NTMResult& r) {
    return nn::cross_entropy(reshape(r.output, {b.input.size(0), b.input.size(1), bits, 2}), b.target);
  };
  for (int64_t step = 0; step < 500; ++step) {
    const data::CopyBatch b = data::make_copy_batch(16, 1 + static_cast<int64_t>(rng.randint(3)), bits, rng);
    Variable loss = loss_of(b, ntm.forward_sequence(Variable(b.input)));
    opt.zero_grad();
    loss.backward();
    nn::clip_grad_norm(ntm.parameters(), 10);
    opt.step();
  }
  NoGradGuard no_grad;
  const data::CopyBatch b = data::make_copy_batch(100, 3, bits, rng);
  const Tensor predicted = argmax(reshape(ntm.forward_sequence(Variable(b.input)).output, {100, 7, bits, 2}).value(), -1);
  const Tensor asked = ge(b.target, scalar(0));
  const real bit_errors = sum(asked * ne(predicted, b.target)).item() / sum(asked).item();
  CHECK(bit_errors < real(0.02));
}
