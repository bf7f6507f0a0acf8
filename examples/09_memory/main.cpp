// examples/09_memory - attention as memory addressing: a memory network answers questions about
// stories, and a Neural Turing Machine learns to copy.
//
// New since 08: the memory is no longer an encoder's states but a matrix of slots that a model
// reads, and writes, by attention (nn/memory/memory.h). Three parts:
//   1. addressing  the NTM's four addressing steps on a hand-made memory, every weighting
//                  printed: content (cosine, beta), interpolation (g), shift (s), sharpening
//                  (gamma); then a write (erase, add) and a read.
//   2. memn2n      end-to-end memory networks with 1, 2 and 3 hops on "where is the apple?"
//                  stories (two supporting facts): accuracy, and which sentence each hop read.
//                  With --seeds 1,2,3 each trains once per seed (the initial weights; the
//                  stories stay the same) and the table shows mean and range.
//   3. ntm         an NTM with a feed-forward controller learns to copy 1-5 bit vectors and is
//                  tested on up to 12; its write and read weightings, step by step.
//   build/examples/09_memory [--part all|addressing|memn2n|ntm] [--linear-steps N] [--seeds S,S,...] [--quick] [--out DIR]
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "data/memory_tasks.h"
#include "examples/common/args.h"
#include "examples/common/seeds.h"
#include "nn/core/loss.h"
#include "nn/memory/memory.h"
#include "nn/optim/optim.h"
#include "seqgrad.h"
#include "viz/heatmap.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  std::string part = "all", out_dir = "build/out";
  int64_t memn2n_steps = 3000, linear_steps = 1000, ntm_steps = 1500;
  std::vector<int64_t> seeds{42};  // MemN2N: one training run per number of hops and seed
};

Config parse(int argc, char** argv) {
  const cli::Args a("09_memory",
                    "09_memory [--part all|addressing|memn2n|ntm] [--linear-steps N] [--seeds S,S,...] [--quick] [--out DIR]",
                    {{"part", "all", "which part to run: all, addressing, memn2n or ntm"},
                     {"linear-steps", "1000", "steps of MemN2N's linear start (softmaxes off)"},
                     {"seeds", "42", "seeds of MemN2N's initial weights, comma-separated (the stories stay the same); "
                                     "two or more: mean and range"},
                     {"quick", "false", "a fifth of every training run", true},
                     {"out", "build/out", "folder for the SVGs"}},
                    argc, argv);
  Config c;
  c.part = a.choice("part", {"all", "addressing", "memn2n", "ntm"});
  c.out_dir = a.text("out");
  if (a.on("quick")) c.memn2n_steps = 600, c.ntm_steps = 300;
  c.linear_steps = a.on("quick") && !a.given("linear-steps") ? 200 : a.integer("linear-steps", 0, 1000000);
  c.seeds = a.integers("seeds", 0, 4294967295);
  return c;
}

// One weighting (1, N) as a row of numbers.
void show(const std::string& label, const Variable& w) {
  std::cout << std::setw(36) << std::left << label << std::right;
  for (real v : w.value().to_vector()) std::cout << std::setw(6) << std::fixed << std::setprecision(2) << v;
  std::cout << "\n";
}
// A memory (1, N, W), one slot per line.
void show_memory(const Variable& memory) {
  const int64_t N = memory.size(1), W = memory.size(2);
  for (int64_t i = 0; i < N; ++i) show(cat("M_", i), Variable(slice(memory.value(), 1, i, i + 1).reshape({1, W})));
}
Variable row(std::vector<real> v) { return Variable(from_vector(v, {1, static_cast<int64_t>(v.size())})); }

// ===============================================================================================
// 1. The NTM's addressing, on a worked case

void addressing() {
  NoGradGuard no_grad;
  // A memory of N = 6 slots of W = 4 numbers. Slots 2 and 3 are alike; the key is close to slot 2.
  const Variable memory(from_vector({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1}, {1, 6, 4}));
  const Variable key = row({0, 0, 1, real(0.2)});
  std::cout << "memory M (N = 6 slots of W = 4), and a key k:\n";
  show_memory(memory);
  show("k", key);
  std::cout << "\n" << std::setw(36) << std::left << "slot" << std::right;
  for (int i = 0; i < 6; ++i) std::cout << std::setw(6) << i;
  std::cout << "\n1. content: softmax(beta cos(k, M_i))\n";
  show("   beta = 1", nn::content_addressing(memory, key, row({1})));
  show("   beta = 20", nn::content_addressing(memory, key, row({20})));
  const Variable w_content = nn::content_addressing(memory, key, row({20}));
  const Variable w_prev = row({0, 0, 0, 0, 1, 0});
  std::cout << "2. interpolation with the previous weighting (on slot 4): g w_c + (1 - g) w_prev\n";
  for (real g : {real(1), real(0.5), real(0)}) show(cat("   g = ", g), nn::interpolate(w_content, w_prev, row({g})));
  std::cout << "3. circular shift of w_c by s = (s_-1, s_0, s_+1)\n";
  show("   s = (0, 0, 1): one slot forward", nn::circular_shift(w_content, row({0, 0, 1})));
  show("   s = (1, 0, 0): one slot back", nn::circular_shift(w_content, row({1, 0, 0})));
  const Variable blurred = nn::circular_shift(w_content, row({real(0.1), real(0.8), real(0.1)}));
  show("   s = (0.1, 0.8, 0.1): a blur", blurred);
  std::cout << "4. sharpening the blurred weighting: w_i^gamma / sum_j w_j^gamma\n";
  for (real gamma : {real(1), real(2), real(10)}) show(cat("   gamma = ", gamma), nn::sharpen(blurred, row({gamma})));
  std::cout << "all four: g = 0 (ignore the key), s = +1, gamma = 10, three steps from slot 4\n";
  Variable w = w_prev;
  for (int step = 1; step <= 3; ++step) {
    w = nn::address(memory, w, {key, row({20}), row({0}), row({0, 0, 1}), row({10})});
    show(cat("   step ", step), w);
  }
  std::cout << "5. write to that slot: erase e = 1 everywhere, add a = (0.5, -0.5, 0.5, -0.5)\n";
  const Variable a = row({real(0.5), real(-0.5), real(0.5), real(-0.5)});
  const Variable written = nn::memory_write(memory, w, row({1, 1, 1, 1}), a);
  show_memory(written);
  const Variable found = nn::content_addressing(written, a, row({20}));
  show("   read it back by content, key = a", found);
  show("   r = sum_i w_i M_i", nn::memory_read(written, found));
}

// ===============================================================================================
// 2. End-to-end memory networks: 1, 2 and 3 hops

// Trains a MemN2N: c.memn2n_steps steps of batch 32 in order through the training stories,
// linear (no softmax) for the first c.linear_steps. Progress lines go to `log` under `label`.
void train_memn2n(nn::MemN2N& model, const Config& c, const std::vector<data::Story>& train, const data::Vocab& vocab,
                  const std::string& label, std::ostream& log) {
  const int64_t batch = 32, N = model.options.memory_size;
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.003)));
  viz::ProgressBar bar(c.memn2n_steps, label, log, viz::ProgressOptions().with_mode(viz::ProgressMode::Log));
  for (int64_t step = 1; step <= c.memn2n_steps; ++step) {
    model.linear_start = step <= c.linear_steps;  // no softmax at first (see nn/memory/memory.h)
    std::vector<data::Story> stories;
    for (int64_t i = 0; i < batch; ++i) stories.push_back(train[((step - 1) * batch + i) % train.size()]);
    const data::EncodedStories b = data::encode_stories(stories, vocab, N);
    Variable loss = nn::cross_entropy(model.forward(b.story, b.question).logits, b.answer);
    opt.zero_grad();
    loss.backward();
    nn::clip_grad_norm(model.parameters(), 40);
    opt.step();
    bar.update(step, {{"loss", loss.item()}});
  }
}

void memory_networks(const Config& c) {
  const int64_t N = 8;
  const auto task = data::StoryTask::WhereObject;
  const std::vector<data::Story> train = data::make_stories(task, data::StoryOptions().with_n(20000).with_sentences(2, N).with_seed(1));
  const std::vector<data::Story> test = data::make_stories(task, data::StoryOptions().with_n(1000).with_sentences(2, N).with_seed(2));
  const data::Vocab vocab = data::story_vocab(train);
  const data::EncodedStories test_data = data::encode_stories(test, vocab, N);
  // The story whose reading we draw: the first test story of at least 6 sentences.
  int64_t shown = 0;
  while (test[shown].sentences.size() < 6) ++shown;
  const data::Story& story = test[shown];
  std::cout << "\n" << train.size() << " training stories, " << test.size() << " test stories, " << vocab.size()
            << " words. Test story " << shown << ":\n";
  for (const std::string& s : story.sentences) std::cout << "  " << s << "\n";
  std::cout << "  " << story.question << "? " << story.answer << "\n\n";

  // Every (seed, hops) pair is one model, built one after another (each from its seed), then
  // trained two at a time, each printing its progress when it is done.
  struct Run { int64_t hops, seed; std::shared_ptr<nn::MemN2N> model; };
  std::vector<Run> runs;
  for (int64_t seed : c.seeds)
    for (int64_t hops = 1; hops <= 3; ++hops) {
      manual_seed(static_cast<uint64_t>(seed));
      runs.push_back({hops, seed, std::make_shared<nn::MemN2N>(nn::MemN2NOptions(vocab.size(), N).with_hops(hops))});
    }
  std::mutex print;
  examples::two_at_a_time(runs.size(), [&](size_t i) {
    std::ostringstream log;
    const Run& run = runs[i];
    train_memn2n(*run.model, c, train, vocab,
                 cat("MemN2N, ", run.hops, " hop", run.hops > 1 ? "s" : "", c.seeds.size() > 1 ? cat(", seed ", run.seed) : ""), log);
    std::lock_guard<std::mutex> lock(print);
    std::cout << log.str() << std::flush;
  });

  // Accuracy, and how often a hop looked hardest at a supporting sentence: hop 1 at the first,
  // hops 2 and 3 at the second.
  examples::SeedTable table("hops", {{"accuracy", 3}, {"hop 1 on fact 1", 3}, {"hop 2 on fact 2", 3}, {"hop 3 on fact 2", 3}});
  NoGradGuard no_grad;
  for (const Run& run : runs) {
    const nn::MemN2NResult r = run.model->forward(test_data.story, test_data.question);
    const Tensor predicted = argmax(r.logits.value(), -1);
    std::vector<double> figures(4, examples::SeedTable::kNone);
    figures[0] = mean(eq(predicted, test_data.answer)).item();
    for (int64_t k = 0; k < run.hops; ++k) {
      const Tensor looked = argmax(r.weights[k].value(), -1);
      int64_t hits = 0;
      for (int64_t b = 0; b < test_data.size(); ++b)
        hits += looked.data()[b] == static_cast<real>(test[b].supporting[std::min<int64_t>(k, 1)]);
      figures[1 + k] = static_cast<double>(hits) / static_cast<double>(test_data.size());
    }
    table.add(std::to_string(run.hops), figures);
    if (run.hops < 2 || run.seed != c.seeds[0]) continue;
    // Where each hop read, for the story shown above (the first seed's models): (hops, sentences)
    std::vector<std::string> hop_names;
    for (int64_t k = 1; k <= run.hops; ++k) hop_names.push_back(cat("hop ", k));
    const int64_t S = static_cast<int64_t>(story.sentences.size());
    Tensor weights = zeros({run.hops, S});
    for (int64_t k = 0; k < run.hops; ++k)
      for (int64_t i = 0; i < S; ++i) weights.data()[k * S + i] = r.weights[k].value().at({shown, i});
    viz::Heatmap map(hop_names, story.sentences, weights);
    map.set_title(cat(story.question, "? (", run.hops, " hops: ", vocab.token(static_cast<int64_t>(predicted.data()[shown])), ")"));
    map.set_value_range(0, 1);
    std::filesystem::create_directories(c.out_dir);
    map.save(cat(c.out_dir, "/memn2n_hops", run.hops, ".svg"));
    std::cout << "\n" << map.to_text() << "wrote " << c.out_dir << "/memn2n_hops" << run.hops << ".svg\n";
  }
  std::cout << "\nwhere-object, " << c.memn2n_steps << " steps (linear start for " << c.linear_steps << ")"
            << examples::over_seeds(c.seeds) << "\n" << table.to_string()
            << "(fact 1: \"X picked up the O\"; fact 2: X's last move)\n";
}

// ===============================================================================================
// 3. A Neural Turing Machine learns to copy

void copy_task(const Config& c) {
  const int64_t bits = 6, batch = 32, max_train = 5, max_test = 12;
  manual_seed(42);
  nn::NTM model(nn::NTMOptions(bits + 1, 2 * bits).with_controller_size(64).with_memory(/*slots=*/12, /*width=*/8));
  std::cout << "\n" << model << "\n" << model.num_parameters() << " parameters\n";
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.001)));
  Generator data_rng(1);
  // Every bit is a two-class prediction: logits (B, T, bits, 2) against targets (B, T, bits).
  auto copy_loss = [&](const data::CopyBatch& b, const nn::NTMResult& r) {
    return nn::cross_entropy(reshape(r.output, {b.input.size(0), b.input.size(1), bits, 2}), b.target);
  };
  {
    viz::ProgressBar bar(c.ntm_steps, "NTM copy, lengths 1-5", std::cout,
                         viz::ProgressOptions().with_mode(viz::ProgressMode::Log));
    for (int64_t step = 1; step <= c.ntm_steps; ++step) {
      const int64_t length = 1 + static_cast<int64_t>(data_rng.randint(max_train));
      const data::CopyBatch b = data::make_copy_batch(batch, length, bits, data_rng);
      Variable loss = copy_loss(b, model.forward_sequence(Variable(b.input)));
      opt.zero_grad();
      loss.backward();
      nn::clip_grad_norm(model.parameters(), 10);
      opt.step();
      bar.update(step, {{"loss", loss.item()}});
    }
  }
  NoGradGuard no_grad;
  Generator test_rng(2);
  std::cout << "\nlength  bit errors  sequences copied exactly   (trained on lengths 1-" << max_train << ")\n";
  for (int64_t length = 1; length <= max_test; ++length) {
    const data::CopyBatch b = data::make_copy_batch(200, length, bits, test_rng);
    const nn::NTMResult r = model.forward_sequence(Variable(b.input));
    const Tensor predicted = argmax(reshape(r.output, {200, 2 * length + 1, bits, 2}).value(), -1);  // (B, T, bits)
    const Tensor asked = ge(b.target, scalar(0)), wrong = asked * ne(predicted, b.target);
    const Tensor wrong_per_sequence = sum(wrong.reshape({200, -1}), -1);
    std::cout << std::setw(6) << length << std::setw(12) << std::fixed << std::setprecision(4) << sum(wrong).item() / sum(asked).item()
              << std::setw(26) << std::setprecision(3) << mean(eq(wrong_per_sequence, scalar(0))).item() << "\n";
  }
  // Where the heads were, step by step, for one sequence of an unseen length
  const int64_t length = 8;
  const data::CopyBatch b = data::make_copy_batch(1, length, bits, test_rng);
  const nn::NTMResult r = model.forward_sequence(Variable(b.input));
  std::vector<std::string> steps;
  for (int64_t t = 1; t <= length; ++t) steps.push_back(cat("in ", t));
  steps.push_back("delim");
  for (int64_t t = 1; t <= length; ++t) steps.push_back(cat("out ", t));
  const int64_t T = 2 * length + 1, N = model.options.memory_slots;
  viz::Heatmap writes(steps, {}, r.write_weights.value().reshape({T, N}));
  viz::Heatmap reads(steps, {}, r.read_weights.value().reshape({T, N}));
  writes.set_title("write weighting (step x slot)").set_value_range(0, 1);
  reads.set_title("read weighting (step x slot)").set_value_range(0, 1);
  std::filesystem::create_directories(c.out_dir);
  viz::HeatmapGrid(2).add(writes).add(reads).set_title("NTM copying 8 vectors").save(c.out_dir + "/ntm_copy.svg");
  std::cout << "\n" << writes.to_text() << "\n" << reads.to_text() << "wrote " << c.out_dir << "/ntm_copy.svg\n";
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    if (c.part == "all" || c.part == "addressing") addressing();
    if (c.part == "all" || c.part == "memn2n") memory_networks(c);
    if (c.part == "all" || c.part == "ntm") copy_task(c);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
