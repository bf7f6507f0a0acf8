// examples/08_extending/coursework/addition_task.cpp - a new toy task in one file, with an option
// of its own, registered by name so that `seqgrad data --task addition` and `seqgrad train --task
// addition` generate it.
//
// Addition, character by character (Zaremba and Sutskever's "Learning to Execute" asks this of
// an LSTM): the source is two numbers and a plus sign, the target their sum,
//   "57+968"  ->  "1025"
// The model must carry from right to left while it reads left to right, and write the sum's
// digits in an order the source does not give: attention has to look back at the last digits
// first. Each number has 1 to --digits digits; the source length is whatever they make, so the
// task ignores --min-len and --max-len. Tokens are characters.
//   make seqgrad EXTRA=examples/08_extending/coursework/addition_task.cpp
//   build/seqgrad train --task addition --digits 3 --arch gru-attn --out add.safetensors
#include <string>

#include "seqgrad.h"

using namespace seqgrad;

// [docs:addition_task]
namespace {

// A number of 1 to `digits` digits, each length equally likely, with no leading zero.
int64_t draw_number(Generator& g, int64_t digits) {
  const int64_t length = 1 + static_cast<int64_t>(g.randint(static_cast<uint64_t>(digits)));
  int64_t lo = 1;
  for (int64_t k = 1; k < length; ++k) lo *= 10;
  const int64_t first = length == 1 ? 0 : lo;  // 0..9 for one digit, else lo..10 lo - 1
  return first + static_cast<int64_t>(g.randint(static_cast<uint64_t>(10 * lo - first)));
}

void generate_additions(const data::TaskOptions& o, const std::function<void(const data::Pair&)>& each) {
  const int64_t digits = o.settings.integer("digits");
  Generator g(o.seed);
  for (int64_t i = 0; i < o.n; ++i) {
    const int64_t a = draw_number(g, digits), b = draw_number(g, digits);
    each({std::to_string(a) + "+" + std::to_string(b), std::to_string(a + b)});
  }
}

}  // namespace

// The one line that makes "addition" a task: its tokens, its default lengths (unused here), its
// generator and its option.
SEQGRAD_REGISTER_TASK("addition", "two numbers and their sum, by character (\"57+968\" -> \"1025\")", "char", 1, 40,
                      generate_additions,
                      {integer_option("digits", 3, 1, 9, "addition: the most digits each number has")})
// [docs:end]
