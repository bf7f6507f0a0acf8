// tests/examples/coursework_indrnn.cpp - the tests of the coursework's IndRNN cell
// (examples/08_extending/coursework/indrnn_cell.cpp): shapes, its step against its equations,
// a gradient check of the step, no dead parameter entries, its option as the model kinds take
// it, "it learns", and a save/load round trip.
//
// Not part of the test binary (the cell is not the library's, and linking it there would add a
// name to every registry listing): tests/examples/coursework.sh builds it and runs it, as a
// student's tests of their own file would be. It includes the cell's file, so it sees the
// cell's classes (IndRNNCell::step) and registers the cell itself:
//   g++ -std=c++17 -I. tests/examples/coursework_indrnn.cpp tests/main.cpp
//       -Wl,--whole-archive build/libseqgrad.a -Wl,--no-whole-archive -pthread
#include <algorithm>
#include <map>

#include "data/batch.h"
#include "examples/08_extending/coursework/indrnn_cell.cpp"
#include "nn/core/checkpoint.h"
#include "nn/decoding/model_kind.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

namespace {

std::vector<std::string> names_and_shapes(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [n, p] : m.named_parameters()) out.push_back(n + " " + to_string(p.shape()));
  return out;
}

// IndRNN's equations, written out: h' = relu(x W^T + b + clip(u, -C, C) h).
Tensor by_hand(const Tensor& x, const Tensor& h, const Tensor& W, const Tensor& b, const Tensor& u, real clip) {
  const Tensor u_c = minimum(maximum(u, scalar(-clip)), scalar(clip));
  return relu(matmul(x, W, false, true) + b + u_c * h);
}

// The settings a model kind resolves from `given` (missing ones: defaults), or its error.
nn::Settings settings_of(const std::string& model, const std::map<std::string, io::Json>& given,
                         std::vector<nn::Option>* taken = nullptr) {
  return nn::resolve_options(
      nn::model_kind(model), [&](const nn::Option& o) { return given.count(o.key) ? given.at(o.key) : io::Json(); },
      [](const nn::Option& o) { return "--" + o.flag_name(); }, taken);
}

std::shared_ptr<nn::EncoderDecoder> build(const std::string& model, const std::map<std::string, io::Json>& given) {
  nn::ModelContext context;
  context.name = model;
  context.src_vocab = 9;
  context.tgt_vocab = 9;
  context.max_len = 10;
  return nn::model_kind(model).build(settings_of(model, given), context);
}

// A batch of the copy task: sources of 3..6 ids from 4..8, targets the same.
data::Batch copy_batch(int64_t n) {
  std::vector<std::vector<int64_t>> src;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> s(static_cast<size_t>(3 + default_generator().randint(4)));
    for (int64_t& id : s) id = 4 + default_generator().randint(5);
    src.push_back(s);
  }
  return data::make_batch(src, src);
}

}  // namespace

TEST_SUITE_BEGIN("coursework_indrnn");

TEST_CASE("indrnn: its parameters are W_ih, u and b_ih, no more; the shapes of a step and a run") {
  manual_seed(1);
  const auto cell = nn::make_recurrent_cell("indrnn", nn::CellOptions(5, 4));
  CHECK(names_and_shapes(*cell) == std::vector<std::string>{"weight_ih [4, 5]", "weight_hh [4]", "bias_ih [4]"});
  CHECK(cell->to_string() == "IndRNNCell(5, 4, clip=1)");
  CHECK(cell->forward(Variable(randn({3, 5})), nn::RNNState{}).h.shape() == Shape{3, 4});
  // u starts in [0, 1): every unit keeps part of its state.
  CHECK(max(neg(cell->weight_hh.value())).item() <= 0);
  CHECK(max(cell->weight_hh.value()).item() < 1);
  const auto layer = nn::make_recurrent_layer("indrnn", nn::RNNOptions(5, 4).with_num_layers(2).with_bidirectional(true));
  CHECK(names_and_shapes(*layer) ==
        std::vector<std::string>{"weight_ih_l0 [4, 5]", "weight_hh_l0 [4]", "bias_ih_l0 [4]",
                                 "weight_ih_l0_reverse [4, 5]", "weight_hh_l0_reverse [4]", "bias_ih_l0_reverse [4]",
                                 "weight_ih_l1 [4, 8]", "weight_hh_l1 [4]", "bias_ih_l1 [4]",
                                 "weight_ih_l1_reverse [4, 8]", "weight_hh_l1_reverse [4]", "bias_ih_l1_reverse [4]"});
  const nn::RNNResult r = layer->forward(Variable(randn({3, 6, 5})), nn::RNNState{}, {6, 2, 4});
  CHECK(r.output.shape() == Shape{3, 6, 8});
  CHECK(r.state.h.shape() == Shape{4, 3, 4});
  CHECK(names_and_shapes(*nn::make_recurrent_layer("indrnn", nn::RNNOptions(5, 4).with_bias(false))) ==
        std::vector<std::string>{"weight_ih_l0 [4, 5]", "weight_hh_l0 [4]"});
}

TEST_CASE("indrnn: a step is relu(x W^T + b + clip(u) h), the cell's and the layer's alike") {
  manual_seed(2);
  for (const double clip : {1.0, 0.3}) {
    CAPTURE(clip);
    nn::Settings s;
    s.set("indrnn_clip", io::Json(clip));
    const auto cell = nn::make_recurrent_cell("indrnn", nn::CellOptions(3, 4).with_settings(s));
    cell->weight_hh.value().copy_(from_vector({-2, -0.2f, 0.1f, 1.5f}));  // two of them beyond either bound
    const Tensor x = randn({2, 3}), h = abs(randn({2, 4}));
    const Tensor expected = by_hand(x, h, cell->weight_ih.value(), cell->bias_ih.value(), cell->weight_hh.value(),
                                    static_cast<real>(clip));
    CHECK(testing::allclose(cell->forward(Variable(x), nn::RNNState{Variable(h), Variable()}).h.value(), expected));
    // The layer over one step, from the same weights and state.
    const auto layer = nn::make_recurrent_layer("indrnn", nn::RNNOptions(3, 4).with_settings(s));
    for (const std::string& name : cell->weights.names()) layer->weights(0, 0)[name].value().copy_(cell->weights[name].value());
    const nn::RNNResult r = layer->forward(Variable(x.reshape({2, 1, 3})), nn::RNNState{Variable(h.reshape({1, 2, 4})), Variable()});
    CHECK(testing::allclose(r.output.value().reshape({2, 4}), expected));
  }
}

TEST_CASE("indrnn: gradcheck of the step with respect to its input, the state, W, u and b, inside and beyond the clip") {
  manual_seed(3);
  for (const double clip : {1.0, 0.5}) {
    CAPTURE(clip);
    // u has entries beyond either bound (no gradient there: the step uses +-C) and inside it.
    const Tensor u = from_vector({-1.6f, -0.3f, 0.2f, 1.8f});
    CHECK_GRAD([clip](const Vars& v) {
      nn::CellWeights w;
      w.add("weight_ih", v[2]);
      w.add("weight_hh", v[3]);
      w.add("bias_ih", v[4]);
      const Variable gx = linear(v[0], w["weight_ih"], w["bias_ih"]);  // as the cell and the layer compute it
      return IndRNNCell::step(gx, nn::RNNState{v[1], Variable()}, w, clip).h;
    }, {randn({2, 3}), randn({2, 4}), randn({4, 3}), u, randn({4})});
  }
}

TEST_CASE("indrnn: no dead parameter entries; with every unit active, each entry of the cells moves the loss") {
  manual_seed(4);
  const auto model = build("indrnn-attn", {{"hidden", io::Json(6)}, {"dim", io::Json(5)}, {"layers", io::Json(2)},
                                           {"bidirectional", io::Json(true)}, {"dropout", io::Json(0)}});
  nn::Module& m = model->module();
  auto of_cell = [](const std::string& name) { return name.rfind("encoder.rnn.", 0) == 0 || name.rfind("cell.", 0) == 0; };
  // Every unit active: with b_ih = 20 and W_ih >= 0 (|W_ih| <= 1/sqrt(6)), each pre-activation
  // is positive (u >= 0 at the start, h >= 0), so no relu is shut at this point. A shut unit
  // passes no gradient whatever its weights; a dead weight never passes any.
  for (auto& [name, p] : m.named_parameters()) {
    if (of_cell(name) && name.find("bias_ih") != std::string::npos) p.value().fill_(20);
    if (of_cell(name) && name.find("weight_ih") != std::string::npos) p.value().copy_(abs(p.value()));
  }
  const data::Batch b = copy_batch(8);
  m.zero_grad();
  model->training_loss(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths, b.tgt_out, nn::CrossEntropyOptions().with_ignore_index(0))
      .backward();
  // The recurrent parameters, counted: what IndRNN's equations use, each entry with a gradient.
  int64_t recurrent = 0, recurrent_entries = 0;
  for (const auto& named : m.named_parameters()) {
    const std::string& name = named.first;
    const Variable& p = named.second;
    if (!of_cell(name)) continue;
    CAPTURE(name);
    REQUIRE(p.grad().defined());
    CHECK(sum(eq(p.grad(), scalar(0))).item() == 0);  // every entry moves the loss
    ++recurrent;
    recurrent_entries += p.numel();
  }
  // Encoder: 2 layers x 2 directions, W_ih (6, 5) and (6, 12), u (6), b (6); decoder cell (Luong:
  // it reads [y; h~], 5 + 6): W_ih (6, 11), u (6), b (6). PyTorch's layout would add a
  // weight_hh (6, 6) and a bias_hh (6) to each of the five: 5 x (36 + 6 - 6) = 180 entries more.
  CHECK(recurrent == 3 * 4 + 3);
  const int64_t encoder = 2 * (6 * 5 + 6 + 6) + 2 * (6 * 12 + 6 + 6), decoder = 6 * 11 + 6 + 6;
  CHECK(recurrent_entries == encoder + decoder);
}

TEST_CASE("indrnn: --indrnn-clip is an option of the indrnn models alone, kept in their settings") {
  std::vector<nn::Option> taken;
  nn::Settings s = settings_of("indrnn-attn", {}, &taken);
  CHECK(s.number("indrnn_clip") == 1);
  CHECK(std::any_of(taken.begin(), taken.end(), [](const nn::Option& o) { return o.flag_name() == "indrnn-clip"; }));
  s = settings_of("indrnn", {{"indrnn_clip", io::Json(0.5)}});
  CHECK(s.number("indrnn_clip") == 0.5);
  // The clip reaches the cells: the layers and the decoder's cell say so.
  const auto model = build("indrnn-attn", {{"indrnn_clip", io::Json(0.25)}, {"hidden", io::Json(4)}, {"dim", io::Json(4)}});
  CHECK(model->module().to_string().find("IndRNN(4, 4, num_layers=2, dropout=0.1, clip=0.25)") != std::string::npos);
  CHECK(model->module().to_string().find("IndRNNCell(8, 4, clip=0.25)") != std::string::npos);
  // Another cell's model does not take it; every model's help lists it (options with chosen = null).
  settings_of("lstm-attn", {}, &taken);
  CHECK(std::none_of(taken.begin(), taken.end(), [](const nn::Option& o) { return o.key == "indrnn_clip"; }));
  CHECK_FALSE(settings_of("gru", {}).has("indrnn_clip"));
  const auto all = nn::model_kinds().get("{cell}-attn").options(nullptr);
  CHECK(std::any_of(all.begin(), all.end(), [](const nn::Option& o) { return o.key == "indrnn_clip"; }));
  // Out of its range: refused, naming the flag and the range.
  CHECK_THROWS_WITH_AS(settings_of("indrnn-attn", {{"indrnn_clip", io::Json(0)}}),
                       "--indrnn-clip must be a number from 0.01 to 100, got 0", std::runtime_error);
}

TEST_CASE("indrnn: it learns to copy, and a saved model loads to the same outputs") {
  manual_seed(5);
  const std::map<std::string, io::Json> given{{"hidden", io::Json(32)}, {"dim", io::Json(16)}, {"layers", io::Json(1)},
                                              {"dropout", io::Json(0)}};
  const auto model = build("indrnn-attn", given);
  nn::Module& m = model->module();
  nn::Adam opt(m.parameters(), nn::AdamOptions(real(0.01)));
  const auto ce = nn::CrossEntropyOptions().with_ignore_index(0);
  const data::Batch held_out = copy_batch(64);
  auto loss_on = [&](const data::Batch& b) {
    return model->training_loss(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths, b.tgt_out, ce);
  };
  m.eval();
  const real before = loss_on(held_out).item();
  m.train();
  for (int step = 0; step < 150; ++step) {
    const data::Batch b = copy_batch(32);
    opt.zero_grad();
    loss_on(b).backward();
    opt.step();
  }
  m.eval();
  const real after = loss_on(held_out).item();
  INFO("held-out loss " << before << " -> " << after);
  CHECK(after < before / 3);

  // Saved, and loaded into a model drawn from another seed: the same parameters, the same logits.
  const testing::TempDir dir;
  const std::string path = dir.file("indrnn.safetensors");
  nn::save(m, path);
  manual_seed(99);
  const auto loaded = build("indrnn-attn", given);
  const Tensor logits = model->logits(held_out.src, held_out.src_lengths, held_out.tgt_in, held_out.tgt_lengths).value();
  CHECK(max(abs(loaded->logits(held_out.src, held_out.src_lengths, held_out.tgt_in, held_out.tgt_lengths).value() - logits))
            .item() > 0);
  nn::load(loaded->module(), path);
  loaded->module().eval();
  CHECK(names_and_shapes(loaded->module()) == names_and_shapes(m));
  CHECK(max(abs(loaded->logits(held_out.src, held_out.src_lengths, held_out.tgt_in, held_out.tgt_lengths).value() - logits))
            .item() == 0);
}

TEST_SUITE_END();
