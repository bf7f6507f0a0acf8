// examples/seqgrad/commands.cpp - what each subcommand does, from flags to files.
#include "examples/seqgrad/commands.h"


#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

#include "autograd/anomaly.h"
#include "data/corpus.h"
#include "data/metrics.h"
#include "data/tasks.h"
#include "examples/seqgrad/args.h"
#include "examples/seqgrad/resume.h"
#include "examples/seqgrad/translator.h"
#include "io/atomic_file.h"
#include "nn/optim.h"
#include "nn/schedule.h"
#include "tensor/check.h"
#include "tensor/random.h"
#include "tensor/thread_pool.h"
#include "viz/heatmap.h"
#include "viz/plot.h"
#include "viz/progress.h"

namespace seqgrad::cli {
namespace {

const std::vector<std::string> kTasks{"copy", "reverse", "sort", "date", "en-zh", "en-fr"};

const char* kUsage =
    "seqgrad - train, run and inspect sequence-to-sequence models\n\n"
    "usage: seqgrad COMMAND [flags]\n\n"
    "commands:\n"
    "  data        write a toy task's sentence pairs as TSV to stdout\n"
    "  train       train a model on a toy task or a TSV corpus and save a checkpoint\n"
    "  translate   translate the arguments, or each line of stdin\n"
    "  eval        score a model on a TSV file: exact match, token error rate, BLEU\n"
    "  attention   draw what a model attends to for one sentence, as an SVG heatmap\n\n"
    "'seqgrad COMMAND --help' lists a command's flags.\n";

// The length range a task's sentences have when no --min-len/--max-len is given.
std::pair<int64_t, int64_t> default_lengths(const std::string& task) {
  if (task == "date") return {1, 40};
  if (task == "en-zh" || task == "en-fr") return {1, 20};
  return {3, 10};
}

std::vector<data::Pair> task_pairs(const Args& a, int64_t n, uint64_t seed) {
  const std::string task = a.choice("task", kTasks);
  auto [lo, hi] = default_lengths(task);
  if (a.given("min-len")) lo = a.integer("min-len", 1, 1000);
  if (a.given("max-len")) hi = a.integer("max-len", 1, 1000);
  check(lo <= hi, "seqgrad ", a.command(), ": --min-len (", lo, ") is larger than --max-len (", hi, ")");
  return data::make_pairs(data::parse_task(task), data::TaskOptions().with_n(n).with_lengths(lo, hi).with_seed(seed));
}

// ================================================================================================
// seqgrad data

int cmd_data(const std::vector<std::string>& words, std::ostream& out) {
  Args a("data", "seqgrad data --task TASK [--n N --min-len A --max-len B --seed S --exclude FILE]",
         {{"task", "", "copy, reverse, sort, date, en-zh or en-fr"},
          {"n", "1000", "number of pairs"},
          {"min-len", "", "shortest source, in tokens (task default)"},
          {"max-len", "", "longest source, in tokens (task default)"},
          {"seed", "0", "random seed"},
          {"exclude", "", "leave out pairs whose source appears in this TSV file (for a held-out test set)"}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("task"), "seqgrad data: --task is required (one of copy, reverse, sort, date, en-zh, en-fr)");
  check(a.positional().empty(), "seqgrad data: unexpected argument '", a.positional().empty() ? "" : a.positional()[0], "'");
  const int64_t n = a.integer("n", 0, 10000000);
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 0, INT64_MAX));
  if (!a.given("exclude")) {
    data::write_tsv(out, task_pairs(a, n, seed));
    return 0;
  }
  // Draw more than asked and keep the first n unseen sources (each kept source once).
  std::set<std::string> seen;
  for (const data::Pair& p : data::read_tsv_file(a.text("exclude"))) seen.insert(p.source);
  std::vector<data::Pair> kept;
  for (int64_t round = 0; static_cast<int64_t>(kept.size()) < n; ++round) {
    check(round < 20, "seqgrad data: could not find ", n, " pairs outside '", a.text("exclude"), "' (found ", kept.size(), ")");
    for (const data::Pair& p : task_pairs(a, 4 * n + 100, seed + 1000003 * static_cast<uint64_t>(round)))
      if (static_cast<int64_t>(kept.size()) < n && seen.insert(p.source).second) kept.push_back(p);
  }
  data::write_tsv(out, kept);
  return 0;
}

// ================================================================================================
// seqgrad train

struct Scores {
  double exact = 0, ter = 0, bleu = 0;
};

Scores score(Translator& t, const std::vector<data::Pair>& pairs, int64_t beam) {
  std::vector<std::string> sources;
  std::vector<data::Tokens> refs, hyps;
  for (const data::Pair& p : pairs) {
    sources.push_back(p.source);
    refs.push_back(t.target_tokens(p.target));
  }
  for (const std::string& h : t.translate(sources, beam)) hyps.push_back(t.target_tokens(h));
  return {data::exact_match(hyps, refs), data::token_error_rate(hyps, refs), data::bleu(hyps, refs)};
}

double validation_loss(Translator& t, const data::EncodedPairs& valid) {
  NoGradGuard no_grad;
  t.module().eval();
  double total = 0;
  int64_t batches = 0;
  std::vector<int64_t> lengths;
  for (const auto& s : valid.src) lengths.push_back(static_cast<int64_t>(s.size()));
  for (const auto& idx : data::make_batches(lengths, 64, 0)) {
    total += t.loss(valid.batch(idx), 0).item();
    ++batches;
  }
  t.module().train();
  return batches ? total / static_cast<double>(batches) : 0;
}

std::string svg_path_for(const std::string& checkpoint) { return io::sibling_path(checkpoint, ".training.svg"); }

// With --resume, a run takes its flags from the checkpoint. Only those that leave the numbers
// alone may be given again: how long to go on, threads, where to write, anomaly checks.
const std::set<std::string> kResumeFlags{"resume", "epochs", "minutes", "threads", "out", "loss-log", "detect-anomaly"};

std::vector<std::string> resume_words(const Args& now, const TrainProgress& saved) {
  const std::vector<FlagSpec>& flags = now.flags();
  std::vector<std::string> words;
  for (const FlagSpec& f : flags) {
    if (!now.given(f.name) || f.name == "resume") continue;
    check(kResumeFlags.count(f.name) > 0, "seqgrad train: --", f.name, " cannot change when resuming; --resume "
          "continues a run with its own settings (only --epochs, --minutes, --threads, --out, --loss-log and "
          "--detect-anomaly can be given again)");
    words.push_back("--" + f.name + (f.is_switch ? "" : "=" + now.text(f.name)));
  }
  for (const auto& [name, value] : saved.flags) {
    if (now.given(name)) continue;
    const std::string& wanted = name;  // (a lambda cannot capture a structured binding in C++17)
    const auto f = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& x) { return x.name == wanted; });
    check_state(f != flags.end() && name != "resume", "seqgrad train: --resume: the checkpoint names an unknown flag '",
                name, "'");
    words.push_back("--" + name + (f->is_switch ? "" : "=" + value));
  }
  return words;
}

int cmd_train(const std::vector<std::string>& words, std::ostream& out) {
  Args a("train",
         "seqgrad train (--task NAME | --train FILE) [--valid FILE] --model MODEL [options] --out MODEL.safetensors\n"
         "       seqgrad train --resume MODEL.resume.safetensors [--epochs N --minutes M --threads T --out FILE]",
         {{"task", "", "train on a toy task: copy, reverse, sort, date, en-zh, en-fr"},
          {"train", "", "train on a TSV file of source<TAB>target lines"},
          {"valid", "", "validate on this TSV file (default: 10% held out from the training data)"},
          {"n", "5000", "pairs to generate for --task"},
          {"min-len", "", "shortest generated source (task default)"},
          {"max-len", "", "longest generated source (task default)"},
          {"model", "transformer", "rnn, gru, lstm, gru-attn, lstm-attn or transformer"},
          {"attention", "general", "score function of -attn models: dot, general, concat, additive, scaled-dot, cosine, mlp"},
          {"layers", "2", "encoder (and Transformer decoder) layers"},
          {"hidden", "128", "hidden size of recurrent models"},
          {"dim", "64", "embedding size; the Transformer's model width"},
          {"heads", "4", "attention heads (Transformer)"},
          {"ffn", "256", "feed-forward width (Transformer)"},
          {"dropout", "0.1", "dropout probability"},
          {"bidirectional", "false", "bidirectional encoder (recurrent models)", true},
          {"epochs", "10", "passes over the training data"},
          {"minutes", "", "stop after this many minutes instead (the best checkpoint is still saved)"},
          {"batch", "64", "sentence pairs per step"},
          {"lr", "0.001", "Adam learning rate"},
          {"label-smoothing", "0", "label smoothing epsilon"},
          {"seed", "0", "random seed"},
          {"threads", "0", "worker threads (0 = SEQGRAD_THREADS or all cores)"},
          {"src-tokens", "", "space or char (default: char for date, else space)"},
          {"tgt-tokens", "", "space or char (default: char for date, else space)"},
          {"min-freq", "1", "drop tokens seen fewer times from the vocabularies"},
          {"max-decode", "64", "longest output (and input) the model handles, in tokens"},
          {"out", "", "where to write the checkpoint (.safetensors)"},
          {"loss-log", "", "write 'epoch step loss' for every step to this file (appended to when resuming)"},
          {"resume", "", "continue the run saved by Ctrl-C in MODEL.resume.safetensors, exactly"},
          {"detect-anomaly", "false", "check every op's value and gradient for NaN/Inf and name the first bad op", true}});
  const Args unparsed = a;
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.positional().empty(), "seqgrad train: unexpected argument '", a.positional().empty() ? "" : a.positional()[0], "'");
  TrainProgress progress;  // a fresh run: epoch 1, step 0
  const bool resuming = a.given("resume");
  const std::string resume_from = a.text("resume");
  if (resuming) {
    progress = read_progress(resume_from);
    const std::vector<std::string> effective = resume_words(a, progress);
    a = unparsed;
    a.parse(effective);
  }
  check(a.given("task") != a.given("train"), "seqgrad train: give exactly one of --task NAME or --train FILE");
  check(a.given("out"), "seqgrad train: --out MODEL.safetensors is required");
  progress.flags.clear();
  for (const FlagSpec& f : a.flags())
    if (a.given(f.name)) progress.flags[f.name] = a.text(f.name);

  // ---- configuration ----
  ModelConfig c;
  c.model = a.choice("model", kModelNames);
  c.attention = a.choice("attention", kScoreNames);
  c.layers = a.integer("layers", 1, kMaxLayers);
  c.hidden = a.integer("hidden", 1, kMaxWidth);
  c.dim = a.integer("dim", 1, kMaxWidth);
  c.heads = a.integer("heads", 1, kMaxHeads);
  c.ffn = a.integer("ffn", 1, kMaxFeedForward);
  c.dropout = a.number("dropout", 0, kMaxDropout);
  c.bidirectional = a.on("bidirectional");
  c.max_len = a.integer("max-decode", 1, kMaxDecode);
  const bool date = a.text("task") == "date";
  c.src_tokens = a.given("src-tokens") ? a.choice("src-tokens", kTokenizerNames) : (date ? "char" : "space");
  c.tgt_tokens = a.given("tgt-tokens") ? a.choice("tgt-tokens", kTokenizerNames) : (date ? "char" : "space");
  check(c.model != "transformer" || c.dim % c.heads == 0, "seqgrad train: --dim (", c.dim,
        ") must be a multiple of --heads (", c.heads, ")");
  const int64_t epochs = a.integer("epochs", 1, kMaxEpochs), batch = a.integer("batch", 1, 65536);
  check(!resuming || progress.epoch <= epochs, "seqgrad train: '", resume_from, "' stopped in epoch ", progress.epoch,
        "; --epochs ", epochs, " leaves nothing to train (give --epochs ", progress.epoch, " or more)");
  const double minutes = a.given("minutes") ? a.number("minutes", 0.001, 1e6) : 0;
  const real lr = static_cast<real>(a.number("lr", 1e-7, 10)), smoothing = static_cast<real>(a.number("label-smoothing", 0, 0.99));
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 0, INT64_MAX));
  const int64_t threads = a.integer("threads", 0, 256);
  const int64_t min_freq = a.integer("min-freq", 1, 1000000);
  const std::string out_path = a.text("out");
  // Every file the run will write is checked now, not after an epoch of training.
  io::check_writable(out_path, "seqgrad train: --out");
  io::check_writable(svg_path_for(out_path), "seqgrad train: the loss plot");
  io::check_writable(resume_path_for(out_path), "seqgrad train: the resume file");
  std::ofstream loss_log;
  if (a.given("loss-log")) {
    loss_log.open(a.text("loss-log"), resuming ? std::ios::app : std::ios::trunc);
    check_state(loss_log.good(), "seqgrad train: cannot write --loss-log '", a.text("loss-log"), "': ", std::strerror(errno));
    loss_log << std::setprecision(std::numeric_limits<real>::max_digits10);
  }
  if (threads > 0) set_num_threads(static_cast<int>(threads));
  const DetectAnomalyGuard anomaly(a.on("detect-anomaly"));
  manual_seed(seed);

  // ---- data ----
  std::vector<data::Pair> train_pairs =
      a.given("task") ? task_pairs(a, a.integer("n", 10, 10000000), seed) : data::read_tsv_file(a.text("train"));
  std::vector<data::Pair> valid_pairs;
  if (a.given("valid")) {
    valid_pairs = data::read_tsv_file(a.text("valid"));
  } else {
    const size_t held = std::max<size_t>(1, train_pairs.size() / 10);
    check(train_pairs.size() >= 2, "seqgrad train: need at least 2 sentence pairs to hold one out for validation");
    valid_pairs.assign(train_pairs.end() - static_cast<std::ptrdiff_t>(held), train_pairs.end());
    train_pairs.resize(train_pairs.size() - held);
  }
  const auto st = c.src_tokens == "char" ? data::Tokenization::Char : data::Tokenization::Space;
  const auto tt = c.tgt_tokens == "char" ? data::Tokenization::Char : data::Tokenization::Space;
  std::unique_ptr<Translator> model;
  if (resuming) {
    model = Translator::load(resume_from);  // the same vocabularies the data would give, and the weights
    const std::string differs = first_difference(c, model->config, "its saved flags", "its model");
    check_state(differs.empty(), "seqgrad train: '", resume_from, "': the saved flags contradict the model (", differs, ")");
    model->module().train();
  } else {
    std::vector<std::vector<std::string>> src_sentences, tgt_sentences;
    for (const data::Pair& p : train_pairs) {
      src_sentences.push_back(data::tokenize(p.source, st));
      tgt_sentences.push_back(data::tokenize(p.target, tt));
    }
    model = std::make_unique<Translator>(c, data::Vocab::build(src_sentences, min_freq), data::Vocab::build(tgt_sentences, min_freq));
  }
  Translator& t = *model;
  data::EncodedPairs train = data::encode_pairs(train_pairs, t.src_vocab, st, t.tgt_vocab, tt);
  const data::EncodedPairs valid = data::encode_pairs(valid_pairs, t.src_vocab, st, t.tgt_vocab, tt);
  for (auto& s : train.src)
    if (static_cast<int64_t>(s.size()) > c.max_len) s.resize(c.max_len);
  for (auto& s : train.tgt)
    if (static_cast<int64_t>(s.size()) > c.max_len) s.resize(c.max_len);
  std::vector<int64_t> lengths;
  for (const auto& s : train.src) lengths.push_back(std::max<int64_t>(1, static_cast<int64_t>(s.size())));
  for (auto& s : train.src)
    if (s.empty()) s.push_back(data::Vocab::kUnk);
  out << train.size() << " training pairs, " << valid.size() << " validation pairs; vocabularies " << t.src_vocab.size()
      << " / " << t.tgt_vocab.size() << "; " << c.model << " with " << t.module().num_parameters() << " parameters\n";

  // ---- training ----
  // Adam with the Transformer paper's betas; the learning rate ramps up linearly over the first
  // 100 steps (or the first 10% of a short run) so the first large gradients do no damage.
  const int64_t batches_per_epoch = (static_cast<int64_t>(train.size()) + batch - 1) / batch;
  nn::Adam opt(t.module().parameters(), nn::AdamOptions(lr).with_betas(real(0.9), real(0.98)).with_eps(real(1e-9)));
  if (!resuming) progress.warmup_steps = std::max<int64_t>(1, std::min<int64_t>(100, epochs * batches_per_epoch / 10));
  nn::LinearWarmupLR warmup(opt, progress.warmup_steps);
  if (resuming) {
    resume_optimizer_and_rng(resume_from, opt);
    // Where the file says the run stopped must fit this run's data (the same data, rebuilt
    // from the saved flags): a step past the epoch's batches, or more optimizer steps than the
    // batches before it, means the file was edited or belongs to another run.
    check_state(progress.step <= batches_per_epoch, "seqgrad train: '", resume_from, "': the training state's 'step' (",
                progress.step, ") is past the ", batches_per_epoch, " batches of an epoch");
    // (The optimizer saves its step as a float32: past 2^24 steps it is rounded, the bound too.)
    const int64_t batches_before = (progress.epoch - 1) * batches_per_epoch + progress.step;
    check_state(opt.steps_taken() <= static_cast<int64_t>(static_cast<float>(batches_before)), "seqgrad train: '", resume_from, "': the optimizer has taken ",
                opt.steps_taken(), " steps, but the run had trained only ", batches_before, " batches");
    warmup.set_step(opt.steps_taken());
    out << "resuming at epoch " << progress.epoch << ", step " << progress.step << " of " << batches_per_epoch << "\n";
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_minutes = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60; };
  const std::vector<data::Pair> probe_pairs(valid_pairs.begin(), valid_pairs.begin() + std::min<std::ptrdiff_t>(500, valid_pairs.size()));
  // Ctrl-C, SIGTERM or SIGHUP: finish the step, save what --resume needs, and stop with the
  // shell's code for that signal (130, 143, 129).
  const InterruptHandler interrupt;
  // The resume file is saved before anything is printed: a terminal that has gone (SIGHUP) or a
  // `| tee` killed by the same Ctrl-C must not stop the save.
  auto save_resume_file = [&](int64_t epoch, int64_t step, double total) {
    progress.epoch = epoch;
    progress.step = step;
    progress.epoch_loss = total;
    const std::string path = resume_path_for(out_path);
    save_resume_checkpoint(path, t, opt, progress);
    return path;
  };
  auto stop_here = [&](int64_t epoch, int64_t step, double total, viz::ProgressBar& bar) {
    const std::string path = save_resume_file(epoch, step, total);
    bar.finish();
    out << "interrupted by " << interrupt.name() << " after step " << step << " of epoch " << epoch << "; saved "
        << path << "\ncontinue with: seqgrad train --resume " << path << "\n";
    return 128 + interrupt.signal();
  };
  bool out_of_time = false;
  for (int64_t epoch = progress.epoch; epoch <= epochs && !out_of_time; ++epoch) {
    viz::ProgressBar bar(batches_per_epoch, "epoch " + std::to_string(epoch), out);
    const bool continued = epoch == progress.epoch;  // a resumed epoch starts where it stopped
    double total = continued ? progress.epoch_loss : 0;
    int64_t step = continued ? progress.step : 0;
    const auto batches = data::make_batches(lengths, batch, seed + static_cast<uint64_t>(epoch));
    while (step < static_cast<int64_t>(batches.size())) {
      if (interrupt.requested()) return stop_here(epoch, step, total, bar);
      const std::vector<size_t>& idx = batches[static_cast<size_t>(step)];
      // [docs:train_step]
      const data::Batch b = train.batch(idx);
      Variable loss = t.loss(b, smoothing);
      opt.zero_grad();
      loss.backward();
      nn::clip_grad_norm(t.module().parameters(), 1);
      opt.step();
      warmup.step();
      total += loss.item();
      int64_t tokens = 0;
      for (int64_t n : b.tgt_lengths) tokens += n;
      bar.update(++step, {{"loss", loss.item()}}, tokens);
      // [docs:end]
      if (loss_log.is_open()) {
        loss_log << epoch << ' ' << opt.steps_taken() << ' ' << loss.item() << '\n' << std::flush;
        if (!loss_log.good()) {  // hours of training are not lost to a full log disk: save, then say so
          const std::string reason = errno ? std::strerror(errno) : "write error";
          const std::string path = save_resume_file(epoch, step, total);
          check_state(false, "seqgrad train: cannot write --loss-log '", a.text("loss-log"), "': ", reason, "; saved ", path,
                      " (continue with: seqgrad train --resume ", path, " --loss-log ANOTHER_FILE)");
        }
      }
      if (minutes > 0 && elapsed_minutes() >= minutes) {
        out_of_time = true;
        break;
      }
    }
    if (interrupt.requested()) return stop_here(epoch, step, total, bar);
    bar.finish();
    const double vloss = validation_loss(t, valid);
    const Scores s = score(t, probe_pairs, 1);
    t.module().train();
    out << "epoch " << epoch << ": train_loss=" << std::fixed << std::setprecision(4) << total / std::max<int64_t>(step, 1)
        << " valid_loss=" << vloss << " exact_match=" << std::setprecision(3) << s.exact << " token_error_rate=" << s.ter
        << (out_of_time ? " (time budget reached)" : "") << "\n";
    progress.epochs.push_back(static_cast<double>(epoch));
    progress.train_loss.push_back(total / static_cast<double>(std::max<int64_t>(step, 1)));
    progress.valid_loss.push_back(vloss);
    progress.exact_match.push_back(s.exact);
    if (vloss < progress.best_valid) {
      progress.best_valid = vloss;
      t.save(out_path);
      out << "saved " << out_path << "\n";
    }
    progress.epoch = epoch + 1;
    progress.step = 0;
    progress.epoch_loss = 0;
  }
  viz::LinePlot plot("Training: loss and exact match per epoch", "epoch", "");
  plot.add_series("train loss", progress.epochs, progress.train_loss).add_series("valid loss", progress.epochs, progress.valid_loss);
  plot.add_series("valid exact match", progress.epochs, progress.exact_match).save(svg_path_for(out_path));
  out << "wrote " << svg_path_for(out_path) << "\n";
  // The run is finished: its resume file would only train it again (and repeat loss-log lines).
  // (A run stopped by --minutes is not finished: it can still be resumed from the same file.)
  if (resuming && !out_of_time && resume_from == resume_path_for(out_path) && std::remove(resume_from.c_str()) == 0)
    out << "removed " << resume_from << " (the run is finished)\n";
  return 0;
}

// ================================================================================================
// seqgrad translate / eval / attention

// "'qqq', 'zzz'": the tokens of `text` that the source vocabulary does not know (read as <unk>).
std::string unknown_tokens(const Translator& t, const std::string& text) {
  std::string list;
  std::set<std::string> named;
  for (const std::string& token : t.source_tokens(text))
    if (t.src_vocab.encode(std::vector<std::string>{token})[0] == data::Vocab::kUnk && named.insert(token).second)
      list += (list.empty() ? "'" : ", '") + token + "'";
  return list;
}

int cmd_translate(const std::vector<std::string>& words, std::ostream& out, std::ostream& err, std::istream& in) {
  Args a("translate", "seqgrad translate --model MODEL [--beam K] [TEXT ...]   (no TEXT: each line of stdin)",
         {{"model", "", "a checkpoint written by seqgrad train"}, {"beam", "1", "beam size (1: greedy decoding)"}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("model"), "seqgrad translate: --model MODEL is required");
  const int64_t beam = a.integer("beam", 1, 64);
  std::unique_ptr<Translator> t = Translator::load(a.text("model"));
  std::vector<std::string> lines = a.positional();
  if (lines.empty()) {
    errno = 0;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    // (std::cin reads through C stdio, which keeps a read error, such as stdin being a folder, to itself.)
    const bool failed = in.bad() || (&in == &std::cin && std::ferror(stdin));
    check_state(!failed, "seqgrad translate: cannot read standard input: ", errno ? std::strerror(errno) : "read error");
  }
  // A sentence of words the model never saw still "translates" (each is <unk>): say so.
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string unknown = unknown_tokens(*t, lines[i]);
    if (!unknown.empty())
      err << "warning: " << (a.positional().empty() ? "line " : "sentence ") << i + 1 << ": " << unknown
          << " not in the model's source vocabulary (translated as <unk>)\n";
  }
  for (const std::string& translation : t->translate(lines, beam)) out << translation << "\n";
  return 0;
}

int cmd_eval(const std::vector<std::string>& words, std::ostream& out) {
  Args a("eval", "seqgrad eval --model MODEL --data FILE [--beam K] [--show N]",
         {{"model", "", "a checkpoint written by seqgrad train"},
          {"data", "", "a TSV file of source<TAB>reference lines"},
          {"beam", "1", "beam size (1: greedy decoding)"},
          {"show", "0", "also print the first N translations beside their references"}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("model") && a.given("data"), "seqgrad eval: --model MODEL and --data FILE are required");
  const int64_t beam = a.integer("beam", 1, 64), show = a.integer("show", 0, 1000000);
  std::unique_ptr<Translator> t = Translator::load(a.text("model"));
  const std::vector<data::Pair> pairs = data::read_tsv_file(a.text("data"));
  if (show > 0) {
    std::vector<std::string> sources;
    for (int64_t i = 0; i < std::min<int64_t>(show, static_cast<int64_t>(pairs.size())); ++i) sources.push_back(pairs[i].source);
    const std::vector<std::string> hyps = t->translate(sources, beam);
    for (size_t i = 0; i < hyps.size(); ++i)
      out << "  " << pairs[i].source << "\n    model:     " << hyps[i] << (hyps[i] == pairs[i].target ? "" : "   (differs)")
          << "\n    reference: " << pairs[i].target << "\n";
  }
  const Scores s = score(*t, pairs, beam);
  out << std::setprecision(4) << "exact_match=" << s.exact << " token_error_rate=" << s.ter << " bleu=" << s.bleu
      << " n=" << pairs.size() << "\n";
  return 0;
}

int cmd_attention(const std::vector<std::string>& words, std::ostream& out) {
  Args a("attention", "seqgrad attention --model MODEL --svg OUT.svg TEXT",
         {{"model", "", "a checkpoint written by seqgrad train"}, {"svg", "", "where to write the heatmap"}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("model") && a.given("svg"), "seqgrad attention: --model MODEL and --svg OUT.svg are required");
  check(!a.positional().empty(), "seqgrad attention: give the sentence to translate, e.g. seqgrad attention --model m "
        "--svg a.svg \"billy eats a banana\"");
  std::string sentence;
  for (const std::string& w : a.positional()) sentence += (sentence.empty() ? "" : " ") + w;
  std::unique_ptr<Translator> t = Translator::load(a.text("model"));
  std::vector<std::string> src, tgt;
  const Tensor weights = t->alignment(sentence, src, tgt);  // (T_out, S)
  viz::Heatmap map(tgt, src, weights);
  map.set_title(sentence + "  ->  " + t->target_text(t->tgt_vocab.encode(std::vector<std::string>(tgt.begin(), tgt.end()))));
  map.save(a.text("svg"));
  out << map.to_text() << "wrote " << a.text("svg") << "\n";
  return 0;
}

}  // namespace

// ================================================================================================

namespace {

int dispatch(const std::vector<std::string>& words, std::ostream& out, std::ostream& err, std::istream& in) {
  if (words.empty()) {
    err << kUsage;  // a mistake, like an unknown command: on stderr, with the error code
    return 2;
  }
  if (words[0] == "--help" || words[0] == "-h" || words[0] == "help") return out << kUsage, 0;
  const std::string command = words[0];
  const std::vector<std::string> rest(words.begin() + 1, words.end());
  if (command == "data") return cmd_data(rest, out);
  if (command == "train") return cmd_train(rest, out);
  if (command == "translate") return cmd_translate(rest, out, err, in);
  if (command == "eval") return cmd_eval(rest, out);
  if (command == "attention") return cmd_attention(rest, out);
  check(false, "seqgrad: unknown command '", command, "'; expected data, train, translate, eval or attention (see 'seqgrad --help')");
  return 2;
}

}  // namespace

int run(const std::vector<std::string>& words, std::ostream& out, std::ostream& err, std::istream& in) {
  const std::string who = words.empty() ? "seqgrad" : "seqgrad " + words[0];  // for messages
  try {
    const int code = dispatch(words, out, err, in);
    // What went to standard output is the result (a corpus, translations): a write that failed
    // (a full disk, a closed stdout) fails the command, not only the last lines.
    out.flush();
    // (A run stopped by a signal keeps the signal's exit code: its terminal may be gone.)
    check_state(code >= 128 || !out.fail(), who, ": cannot write standard output: ", errno ? std::strerror(errno) : "write error");
    return code;
  } catch (const std::bad_alloc& e) {
    // A tensor's OutOfMemory says how much it asked for; any other allocation only that it failed.
    const std::string what = e.what();
    err << "error: " << (what.rfind("out of memory", 0) == 0 ? what : who + ": out of memory (" + what + ")")
        << "\n";
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
  }
  return 2;
}

}  // namespace seqgrad::cli
