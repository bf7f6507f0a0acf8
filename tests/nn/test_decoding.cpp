// tests/nn/test_decoding.cpp - greedy decoding, beam search and sampling (nn/decoding/decoding.h) on a
// scripted model: an EncoderDecoder whose next-token log-probabilities are written out per
// position, so each search's choices can be worked out by hand. (The real models are decoded
// in test_transformer.cpp, test_seq2seq.cpp, test_attention_seq2seq.cpp and the CLI tests.)
#include <cmath>
#include <map>
#include <memory>

#include "io/special_tokens.h"
#include "nn/decoding/decoding.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

// Tokens 4..7 are "a b c d"; V = 8.
constexpr int64_t kA = 4, kB = 5, kC = 6, kD = 7, kV = 8;

// Each row is at some position t (tokens fed so far); log P(next | t) comes from a table,
// the same for every row and source. Unlisted tokens get -10.
class ScriptedModel : public nn::Module, public nn::EncoderDecoder {
 public:
  explicit ScriptedModel(std::map<int64_t, std::map<int64_t, real>> table) : table_(std::move(table)) {}
  std::string name() const override { return "ScriptedModel"; }

  struct State : nn::DecoderState {
    std::vector<int64_t> position;
    void reorder_rows(const Tensor& index) override {
      std::vector<int64_t> p;
      for (int64_t i = 0; i < index.numel(); ++i) p.push_back(position[static_cast<size_t>(index.data()[i])]);
      position = p;
    }
  };

  Variable logits(const Tensor&, const std::vector<int64_t>&, const Tensor&, const std::vector<int64_t>&) override {
    return Variable();
  }
  std::unique_ptr<nn::DecoderState> start(const Tensor& src, const std::vector<int64_t>&, const nn::StartOptions&) override {
    auto s = std::make_unique<State>();
    s->position.assign(static_cast<size_t>(src.size(0)), 0);
    return s;
  }
  Tensor step(nn::DecoderState& base, const Tensor& tokens) override {
    auto& s = static_cast<State&>(base);
    const int64_t N = tokens.numel();
    Tensor logp = full({N, kV}, real(-10));
    for (int64_t n = 0; n < N; ++n) {
      const auto row = table_.find(s.position[static_cast<size_t>(n)]);
      if (row != table_.end())
        for (const auto& [id, value] : row->second) logp.data()[n * kV + id] = value;
      ++s.position[static_cast<size_t>(n)];
    }
    return logp;
  }
  Module& module() override { return *this; }

 private:
  std::map<int64_t, std::map<int64_t, real>> table_;
};

const Tensor kOneSource = zeros({1, 3});

}  // namespace

TEST_CASE("beam search does not stop while a live prefix can still win on the normalised score") {
  // First step: <eos> now (log P = -1.0) beats "a" (-1.1), and finishes; then "a b c d <eos>"
  // costs almost nothing more: L = -1.104 over ((5 + 5) / 6)^0.6 scores -0.81, better than the
  // empty output's -1.0 / 1. Stopping as soon as the live prefix's log-probability (-1.1) is
  // below the finished one's (-1.0) would return the empty output.
  ScriptedModel model({{0, {{kEosId, real(-1.0)}, {kA, real(-1.1)}}},
                       {1, {{kB, real(-0.001)}}},
                       {2, {{kC, real(-0.001)}}},
                       {3, {{kD, real(-0.001)}}},
                       {4, {{kEosId, real(-0.001)}}}});
  const auto o = nn::DecodeOptions().with_beam_size(1).with_length_penalty(real(0.6)).with_max_len(10);
  const nn::DecodeResult beam = nn::beam_search(model, kOneSource, {}, o);
  CHECK(beam.tokens[0] == std::vector<int64_t>{kA, kB, kC, kD});
  CHECK(beam.log_probs[0] == doctest::Approx(-1.104).epsilon(1e-4));
  // Greedy takes <eos> at once; without a length penalty the empty output is the best too.
  CHECK(nn::greedy_decode(model, kOneSource, {}, o).tokens[0].empty());
  CHECK(nn::beam_search(model, kOneSource, {}, nn::DecodeOptions(o).with_length_penalty(0)).tokens[0].empty());
  // decode() is greedy at beam size 1 and beam search above it.
  CHECK(nn::decode(model, kOneSource, {}, o).tokens == nn::greedy_decode(model, kOneSource, {}, o).tokens);
  CHECK(nn::decode(model, kOneSource, {}, nn::DecodeOptions(o).with_beam_size(2)).tokens ==
        nn::beam_search(model, kOneSource, {}, nn::DecodeOptions(o).with_beam_size(2)).tokens);
}

TEST_CASE("beam search keeps its search tree: every live beam and finished hypothesis, the answer among them") {
  // The table of the test above, K = 2. At position 0 only <eos> (-1.0) and "a" (-1.1) are
  // likely: step 0 finishes the empty output and keeps "a" (and a -10 token) as live beams.
  ScriptedModel model({{0, {{kEosId, real(-1.0)}, {kA, real(-1.1)}}},
                       {1, {{kB, real(-0.001)}}},
                       {2, {{kC, real(-0.001)}}},
                       {3, {{kD, real(-0.001)}}},
                       {4, {{kEosId, real(-0.001)}}}});
  const auto o = nn::DecodeOptions().with_beam_size(2).with_max_len(10).with_keep_search(true);
  const nn::DecodeResult r = nn::beam_search(model, kOneSource, {}, o);
  REQUIRE(r.search.size() == 1);
  const std::vector<nn::SearchNode>& tree = r.search[0];
  // Step 0: the empty output finished with <eos> (score -1.0 / 1), "a" live at -1.1.
  REQUIRE(tree.size() >= 3);
  CHECK(tree[0].step == 0);
  CHECK(tree[0].finished);
  CHECK(tree[0].eos);
  CHECK(tree[0].tokens.empty());
  CHECK(tree[0].log_prob == doctest::Approx(-1.0));
  CHECK(tree[0].score == doctest::Approx(-1.0));
  CHECK(tree[1].step == 0);
  CHECK_FALSE(tree[1].finished);
  CHECK(tree[1].tokens == std::vector<int64_t>{kA});
  CHECK(tree[1].log_prob == doctest::Approx(-1.1));
  CHECK(std::isnan(tree[1].score));
  // Every live node extends a prefix kept the step before, and the answer is the finished node
  // with the best score.
  const nn::SearchNode* best = nullptr;
  for (const nn::SearchNode& n : tree) {
    if (n.finished && (!best || n.score > best->score)) best = &n;
    if (n.finished || n.step == 0) continue;
    const std::vector<int64_t> parent(n.tokens.begin(), n.tokens.end() - 1);
    bool found = false;
    for (const nn::SearchNode& p : tree) found = found || (!p.finished && p.step == n.step - 1 && p.tokens == parent);
    CHECK_MESSAGE(found, "step ", n.step, ": a live beam whose prefix was not kept at the step before");
  }
  REQUIRE(best != nullptr);
  CHECK(best->tokens == r.tokens[0]);
  CHECK(best->tokens == std::vector<int64_t>{kA, kB, kC, kD});
  // Without keep_search nothing is kept, and the answer is the same.
  const nn::DecodeResult plain = nn::beam_search(model, kOneSource, {}, nn::DecodeOptions(o).with_keep_search(false));
  CHECK(plain.search.empty());
  CHECK(plain.tokens == r.tokens);
}

TEST_CASE("sampling: top_k = 1 is greedy, the same generator seed gives the same output, temperature sharpens") {
  // Every position: "a" -0.2, "b" -1.8, <eos> after 3 tokens.
  std::map<int64_t, std::map<int64_t, real>> table;
  for (int64_t t = 0; t < 3; ++t) table[t] = {{kA, real(-0.2)}, {kB, real(-1.8)}};
  table[3] = {{kEosId, 0}};
  ScriptedModel model(table);
  const Tensor sources = zeros({200, 3});  // 200 samples at once
  const auto o = nn::DecodeOptions().with_max_len(5);
  Generator g(7);
  CHECK(nn::sample(model, sources, {}, nn::DecodeOptions(o).with_top_k(1), g).tokens ==
        nn::greedy_decode(model, sources, {}, o).tokens);
  Generator g1(11), g2(11);
  const nn::DecodeResult x = nn::sample(model, sources, {}, o, g1), y = nn::sample(model, sources, {}, o, g2);
  CHECK(x.tokens == y.tokens);
  auto share_of_b = [&](const nn::DecodeResult& r) {
    double b = 0;
    for (const auto& tokens : r.tokens)
      for (int64_t id : tokens) b += id == kB;
    return b / (3.0 * static_cast<double>(r.tokens.size()));
  };
  // P(b) = e^-1.8 / (e^-0.2 + e^-1.8 + 6 e^-10) = 0.168 at temperature 1; at 0.5, 0.039.
  const double at_one = share_of_b(x);
  CHECK(at_one > 0.11);
  CHECK(at_one < 0.23);
  CHECK(share_of_b(nn::sample(model, sources, {}, nn::DecodeOptions(o).with_temperature(real(0.5)), g1)) < 0.08);
}

TEST_CASE("decoding errors are pinned") {
  ScriptedModel model({});
  CHECK_THROWS_WITH_AS(nn::sample(model, kOneSource, {}, nn::DecodeOptions().with_temperature(0)),
                       "sample: expected temperature > 0, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::sample(model, kOneSource, {}, nn::DecodeOptions().with_top_k(-1)),
                       "sample: expected top_k >= 0 (0: every token), got -1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::beam_search(model, kOneSource, {}, nn::DecodeOptions().with_length_penalty(-1)),
                       "beam_search: expected length_penalty >= 0, got -1", std::invalid_argument);
}
