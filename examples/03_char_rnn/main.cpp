// examples/03_char_rnn - a character-level language model: RNN versus LSTM.
//
// New since 02: sequences. A recurrent layer reads text one character at a time and, at every
// step, predicts the next character from its hidden state. We train a plain RNN and an LSTM of
// the same size on the same text, compare their validation loss (in bits per character), and
// let each write new text by sampling one character at a time at three temperatures, with
// nn::sample (the model is a decoder whose source is the prompt: char_model.h).
//   build/examples/03_char_rnn [--steps N]
#include <cmath>
#include <iomanip>
#include <iostream>

#include "data/tokenizer.h"
#include "data/vocab.h"
#include "examples/03_char_rnn/char_model.h"
#include "examples/common/args.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "seqgrad.h"
#include "viz/progress.h"

using namespace seqgrad;

// The text: sentences from a small grammar about this very project, generated from a seed.
// Spelling, word boundaries and which words follow which are what a model can learn; the
// choices between equally likely words are not, so the loss cannot reach zero.
std::string make_text(int64_t sentences, uint64_t seed) {
  const std::vector<std::string> subjects = {"the encoder", "the decoder", "a model", "the student", "attention",
                                             "every layer", "the transformer", "an lstm"};
  const std::vector<std::string> verbs = {"reads", "writes", "scores", "remembers", "forgets", "predicts", "learns"};
  const std::vector<std::string> objects = {"the sentence", "every word", "the next character", "the context",
                                            "a hidden state", "the source", "its own output"};
  const std::vector<std::string> endings = {"", " one word at a time", " in parallel", " from the start",
                                            " with a softmax", " again and again"};
  Generator g(seed);
  auto pick = [&g](const std::vector<std::string>& words) { return words[g.randint(words.size())]; };
  std::string text;
  for (int64_t i = 0; i < sentences; ++i) text += pick(subjects) + " " + pick(verbs) + " " + pick(objects) + pick(endings) + ". ";
  return text;
}

int run(int argc, char** argv) {
  // ---------------------------------------------------------------------------------------------
  // Config
  const cli::Args a("03_char_rnn", "03_char_rnn [--steps N]", {{"steps", "800", "training steps per model"}}, argc, argv);
  const int64_t steps = a.integer("steps", 1, 1000000);
  const int64_t batch = 32, window = 48, hidden = 128;

  // ---------------------------------------------------------------------------------------------
  // Data: characters -> ids; 2000 sentences to train on, then 200 new ones to validate on
  const std::vector<std::string> chars = data::split_chars(make_text(2200, /*seed=*/1));
  const data::Vocab vocab = data::Vocab::build({chars});
  const std::vector<int64_t> ids = vocab.encode(chars);
  const int64_t split = static_cast<int64_t>(ids.size()) * 10 / 11;
  std::cout << ids.size() << " characters, vocabulary of " << vocab.size() << "\n";

  // A batch of random windows: x = text[i .. i+window), y = text[i+1 .. i+window] (next characters)
  auto sample_batch = [&](int64_t lo, int64_t hi, Tensor& x, Tensor& y) {
    x = Tensor::empty({batch, window});
    y = Tensor::empty({batch, window});
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t start = lo + static_cast<int64_t>(default_generator().randint(hi - lo - window - 1));
      for (int64_t t = 0; t < window; ++t) {
        x.at({b, t}) = static_cast<real>(ids[start + t]);
        y.at({b, t}) = static_cast<real>(ids[start + t + 1]);
      }
    }
  };

  for (const std::string cell : {"rnn", "lstm"}) {
    const std::string name = cell == "lstm" ? "LSTM" : "RNN";
    // -------------------------------------------------------------------------------------------
    // Model and training
    manual_seed(7);
    CharModel model(cell, vocab.size(), hidden);
    nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.003)));
    viz::ProgressBar bar(steps, name);
    for (int64_t step = 1; step <= steps; ++step) {
      Tensor x, y;
      sample_batch(0, split, x, y);
      nn::RNNState state;
      Variable loss = nn::cross_entropy(model.forward(x, state), y);  // logits (B, T, V) vs y (B, T)
      opt.zero_grad();
      loss.backward();
      nn::clip_grad_norm(model.parameters(), 1);
      opt.step();
      bar.update(step, {{"loss", loss.item()}}, batch * window);
    }
    bar.finish();

    // -------------------------------------------------------------------------------------------
    // Evaluation: validation loss in bits per character (cross-entropy / ln 2)
    NoGradGuard no_grad;
    manual_seed(99);
    double val = 0;
    for (int i = 0; i < 20; ++i) {
      Tensor x, y;
      sample_batch(split - window, static_cast<int64_t>(ids.size()), x, y);
      nn::RNNState state;
      val += nn::cross_entropy(model.forward(x, state), y).item() / 20;
    }
    std::cout << name << ": validation " << std::fixed << std::setprecision(3) << val / std::log(2.0)
              << " bits per character\n";

    // Sampling (nn::sample, the sampler every model here uses): read the prompt, then draw each
    // next character from softmax(logits / temperature) and feed it back, 120 times (fewer if
    // it ever drew <eos>, which the text never holds).
    const std::string prompt = "the ";
    Tensor prompt_ids = Tensor::empty({1, static_cast<int64_t>(prompt.size())});  // (1, P)
    for (size_t i = 0; i < prompt.size(); ++i) prompt_ids.data()[i] = static_cast<real>(vocab.id(std::string(1, prompt[i])));
    for (real temperature : {real(0.5), real(1.0), real(1.5)}) {
      const nn::DecodeResult r =
          nn::sample(model, prompt_ids, {}, nn::DecodeOptions().with_max_len(120).with_temperature(temperature));
      std::string text = prompt;
      for (int64_t id : r.tokens[0]) text += vocab.token(id);
      std::cout << "  T=" << std::setprecision(1) << temperature << ": " << text << "\n";
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
