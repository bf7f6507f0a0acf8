// tests/nn/test_grad_every_model.cpp - gradcheck of every registered model kind's training loss,
// with every registered choice of its registry options (each attention score of an -attn kind,
// each positional encoding of the Transformer): whatever is linked in, a student's component
// too (make test EXTRA=...), is checked here without a line of test written for it. Float64 only:
// a whole model's loss in float32 is too rough for a strict check.
#include <algorithm>
#include <optional>

#include "nn/decoding/model_kind.h"
#include "tests/test_util.h"

using namespace seqgrad;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("every model grad float64");

namespace {

// Small settings for a kind: each whole-number option at most `limit` (the widths, the layers;
// within its range), every other option at its default, and `choice` for the registry option
// `choice_key`. (Null when the kind's rules refuse them: --dim a multiple of --heads ...)
std::optional<nn::Settings> small_settings(const nn::ModelKind& kind, const std::string& choice_key,
                                           const std::string& choice, int64_t limit) {
  auto value = [&](const nn::Option& o) -> io::Json {
    if (o.key == choice_key) return io::Json(choice);
    if (o.type == nn::Option::Type::Integer)
      return io::Json(std::max<int64_t>(static_cast<int64_t>(o.lo), std::min<int64_t>(o.default_json().as_int64(), limit)));
    return io::Json();
  };
  try {
    return nn::resolve_options(kind, value, [](const nn::Option& o) { return o.key; });
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The smallest model of the kind that builds: widths of 4, else 8 (an encoding that rotates pairs
// of features needs an even head size), else its defaults. Null when none does.
std::shared_ptr<nn::EncoderDecoder> small_model(const nn::ModelKind& kind, const std::string& choice_key,
                                                const std::string& choice, const nn::ModelContext& context) {
  for (const int64_t limit : {int64_t(4), int64_t(8), INT64_MAX}) {
    const std::optional<nn::Settings> settings = small_settings(kind, choice_key, choice, limit);
    if (!settings) continue;
    try {
      manual_seed(3);
      return kind.build(*settings, context);
    } catch (const std::invalid_argument&) {
      // (the next size)
    }
  }
  return nullptr;
}

// Every (model, registry option, choice) to check: each kind at its defaults, and once per
// choice of each of its options whose choices come from a registry (attention, positional).
struct Case {
  std::string model, key, choice;
};
std::vector<Case> every_case() {
  std::vector<Case> cases;
  for (const std::string& model : nn::model_names()) {
    cases.push_back({model, "", ""});
    for (const nn::Option& o : nn::model_kind(model).options(nullptr))
      if (o.type == nn::Option::Type::Choice)
        for (const std::string& choice : o.choices())
          if (choice != o.default_value) cases.push_back({model, o.key, choice});
  }
  return cases;
}

}  // namespace

TEST_CASE("grad through every model kind's training loss, with every score and positional encoding") {
  const Tensor src = from_vector({4, 5, 6, 5, 4, 0}, {2, 3}), tgt_in = from_vector({1, 6, 4, 1, 5, 0}, {2, 3});
  const Tensor tgt_out = from_vector({6, 4, 2, 5, 2, 0}, {2, 3});
  const auto ce = CrossEntropyOptions().with_ignore_index(0);
  size_t checked = 0;
  for (const Case& c : every_case()) {
    CAPTURE(c.model);
    CAPTURE(c.key);
    CAPTURE(c.choice);
    nn::ModelContext context;
    context.name = c.model;
    context.src_vocab = context.tgt_vocab = 7;
    context.max_len = 8;
    const std::shared_ptr<nn::EncoderDecoder> model = small_model(nn::model_kind(c.model), c.key, c.choice, context);
    if (!model) {
      // A choice the kind's rules refuse at every size (a score that needs equal query and key
      // sizes, with a bidirectional encoder, say) is no model: the tool refuses it too.
      MESSAGE("no model of these settings");
      continue;
    }
    model->module().eval();  // no dropout: the loss must be a function of the weights alone
    const GradcheckResult r = gradcheck_parameters(
        [&] { return model->training_loss(src, {3, 2}, tgt_in, {3, 2}, tgt_out, ce); }, model->module().parameters());
    CHECK_MESSAGE(r.ok, r.message);
    ++checked;
  }
  CHECK(checked >= nn::model_names().size());
}

TEST_SUITE_END();
#endif
