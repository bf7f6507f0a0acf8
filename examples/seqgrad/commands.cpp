// examples/seqgrad/commands.cpp - what each subcommand does, from flags to files.
#include "examples/seqgrad/commands.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include <poll.h>      // POSIX: poll
#include <sys/stat.h>  // POSIX: fstat
#include <unistd.h>    // POSIX: STDOUT_FILENO

#include "data/corpus.h"
#include "data/gettext.h"
#include "data/tasks.h"
#include "examples/common/args.h"
#include "examples/seqgrad/pictures.h"
#include "examples/seqgrad/train.h"
#include "examples/seqgrad/translator.h"
#include "io/atomic_file.h"
#include "io/utf8.h"
#include "nn/decoding/decoding.h"
#include "tensor/check.h"
#include "tensor/thread_pool.h"
#include "viz/heatmap.h"

namespace seqgrad::cli {
namespace {

// What went to standard output is the result (a corpus, translations): a write that failed (a
// full disk, a closed stdout) fails the command, not only the last lines.
// Has the reader of standard output gone (a `| head` that took its line and left)? Then
// standard output is a pipe that poll reports broken (POLLERR on Linux, POLLHUP elsewhere).
bool stdout_reader_gone() {
  struct stat st {};
  if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  struct pollfd p {};
  p.fd = STDOUT_FILENO;
  p.events = POLLOUT;
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

void flush_output(std::ostream& out, const std::string& who) {
  out.flush();
  // A reader that went away ends the command quietly, as any Unix filter: `seqgrad train ... |
  // head -1` trains, saves and exits 0 (while it trains SIGPIPE is ignored, so its writes fail
  // instead of ending it: see InterruptHandler in resume.h).
  if (out.fail() && &out == &std::cout && stdout_reader_gone()) return;
  check_state(!out.fail(), who, ": cannot write standard output: ", errno ? std::strerror(errno) : "write error");
}

const char* kUsage =
    "seqgrad - train, run and inspect sequence-to-sequence models\n\n"
    "usage: seqgrad COMMAND [flags]\n\n"
    "commands:\n"
    "  data        write a toy task's sentence pairs as TSV to stdout\n"
    "  train       train a model on a toy task or a TSV corpus and save a checkpoint\n"
    "  translate   translate the arguments, or each line of stdin\n"
    "  eval        score a model on a TSV file: exact match, edits per token, BLEU\n"
    "  attention   draw what a model attends to for one sentence: heatmaps, the beam's tree, an explorer page\n"
    "  sample      draw text from a language model (seqgrad train --arch lm), optionally continuing a prompt\n"
    "  average     average the weights of several checkpoints of one model into one\n\n"
    "'seqgrad COMMAND --help' lists a command's flags.\n";

// ================================================================================================
// seqgrad data

// seqgrad data --from-catalogs DIR --lang L [--part P]: a real corpus from the system's message
// translations (data/gettext.h), English source, L target, one pair per line; whole programs go
// to train, valid or test, so a test program's messages are never seen in training. What was
// read and left out goes to stderr.
int data_from_catalogs(const Args& a, std::ostream& out, std::ostream& err) {
  for (const char* flag : {"task", "n", "min-len", "max-len", "seed", "exclude"})
    check(!a.given(flag), "seqgrad data: --", flag, " is for --task; --from-catalogs reads its pairs");
  check_task_options_unused(a, "--from-catalogs reads its pairs");
  check(a.given("lang"), "seqgrad data: --from-catalogs needs --lang (the target language: zh_CN, fr, de, ...)");
  const std::string part = a.choice("part", {"all", "train", "valid", "test"});
  const data::LocaleCatalogs c = data::read_locale_catalogs(a.text("from-catalogs"), a.text("lang"));
  std::map<std::string, std::pair<int64_t, int64_t>> parts;  // part -> (programs, pairs)
  std::vector<data::Pair> kept;
  for (const data::ProgramPairs& p : c.programs) {
    const std::string its = data::program_part(p.program);
    parts[its].first += 1;
    parts[its].second += static_cast<int64_t>(p.pairs.size());
    if (part == "all" || part == its) kept.insert(kept.end(), p.pairs.begin(), p.pairs.end());
  }
  const data::CatalogDrops& d = c.dropped;
  err << c.programs.size() << " catalogs (" << c.skipped_catalogs << " skipped: not UTF-8), " << c.entries
      << " messages: " << c.entries - d.total() << " pairs kept; left out " << d.duplicates << " repeated sources, "
      << d.identical << " identical to their source, " << d.plural << " with plurals, " << d.header << " headers, "
      << d.untranslated << " untranslated, " << d.empty + d.control + d.not_utf8 + d.too_long + d.wrong_charset
      << " other\n";
  for (const char* name : {"train", "valid", "test"})
    err << "  " << name << ": " << parts[name].second << " pairs from " << parts[name].first << " program" << (parts[name].first == 1 ? "" : "s") << "\n";
  data::write_tsv(out, kept);
  err << "wrote " << kept.size() << " pairs (" << part << ")\n";
  return 0;
}

int cmd_data(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  std::vector<FlagSpec> flags = task_flags("a toy task");
  for (const FlagSpec& f : std::vector<FlagSpec>{
         {"n", "1000", "number of pairs"},
          {"min-len", "", "shortest source, in tokens (task default)"},
          {"max-len", "", "longest source, in tokens (task default)"},
          {"seed", "0", "random seed"},
          {"exclude", "", "leave out pairs whose source appears in this TSV file (for a held-out test set)"},
          {"from-catalogs", "", "a real corpus instead: the gettext catalogs (.mo) under this locale folder, "
                                "English -> --lang, normalised (accelerators off, format specifiers kept as words)"},
          {"lang", "", "--from-catalogs: the target language, as the folder under it is named (zh_CN, fr, de, ...)"},
          {"part", "all", "--from-catalogs: all, or the train, valid or test part (whole programs each, by a hash of "
                          "the program's name: about 90/5/5 of the programs)"}})
    flags.push_back(f);
  Args a("seqgrad data",
         "seqgrad data --task TASK [--n N --min-len A --max-len B --seed S --exclude FILE]\n"
         "       seqgrad data --from-catalogs /usr/share/locale --lang zh_CN [--part train|valid|test]",
         std::move(flags));
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.positional().empty(), "seqgrad data: unexpected argument '", a.positional().empty() ? "" : a.positional()[0], "'");
  if (a.given("from-catalogs")) return data_from_catalogs(a, out, err);
  for (const char* flag : {"lang", "part"})
    check(!a.given(flag), "seqgrad data: --", flag, " is for --from-catalogs");
  check(a.given("task"), "seqgrad data: --task is required (one of ", nn::join_names(data::tasks().names(), ", "), ")");
  const int64_t n = a.integer("n", 0, 10000000);
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 0, INT64_MAX));
  if (!a.given("exclude")) {  // written as they are made: constant memory, and `| head` ends it at once
    for_each_task_pair(a, n, seed, [&](const data::Pair& p) { out << p.source << '\t' << p.target << '\n'; });
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
// seqgrad translate / eval / attention

// "'qqq', 'zzz'": the tokens of `text` that the source vocabulary does not know (read as <unk>).
std::string unknown_tokens(const Translator& t, const std::string& text) {
  std::string list;
  std::set<std::string> named;
  for (const std::string& token : t.source_tokens(text))
    if (t.src_vocab.id(token) == data::Vocab::kUnk && named.insert(token).second)
      list += (list.empty() ? "'" : ", '") + token + "'";
  return list;
}

// A log-probability as the --scores column shows it: 6 decimals, "-0.000123".
std::string format_score(double log_prob) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", log_prob);
  return buf;
}

// The decoding flags translate and eval share: --beam, --length-penalty, --batch, and --threads
// (set here: the translations are the same for any number).
// A language model (--arch lm) reads no source: translate, eval and attention have nothing to do with it.
void check_translates(const Translator& t, const std::string& path, const char* command) {
  check_state(t.model().reads_source(), "seqgrad ", command, ": '", path, "' is a language model (", t.config.model,
              "), which reads no source to translate; draw text from it with seqgrad sample --model ", path);
}

TranslateOptions translate_options(const Args& a) {
  TranslateOptions o;
  o.beam = a.integer("beam", 1, 64);
  o.batch = a.integer("batch", 1, kMaxTranslateBatch);
  o.length_penalty = static_cast<real>(a.number("length-penalty", 0, 10));
  if (const int64_t threads = a.integer("threads", 0, 256); threads > 0) set_num_threads(static_cast<int>(threads));
  return o;
}

// The lines translate reads, as they arrive: a line that has arrived is translated without
// waiting for the rest, so `seqgrad translate` works typed into, behind a slow pipe, and on
// endless input (`yes "he eats" | seqgrad translate ... | head -1`) in bounded memory. From
// standard input the bytes are read straight from descriptor 0, because C++ streams cannot say
// whether more is waiting and poll can; any other stream (a test's) counts as all there. A line
// longer than data::kMaxLineBytes is an error, so one endless line cannot grow without bound.
class InputLines {
 public:
  explicit InputLines(std::istream& in) : in_(in), raw_(&in == &std::cin && !in.bad()) {}

  // The next line, without its '\n', into `line`; false at the end of the input. wait = false:
  // only a line that is already here (false also when none is yet).
  bool next(std::string& line, bool wait, size_t number) {
    if (!raw_) return static_cast<bool>(std::getline(in_, line));
    for (;;) {
      const size_t newline = pending_.find('\n', scanned_);
      if (newline != std::string::npos) {
        line.assign(pending_, start_, newline - start_);
        start_ = scanned_ = newline + 1;
        if (start_ >= pending_.size() / 2) {  // drop what was handed out, now and then
          pending_.erase(0, start_);
          start_ = scanned_ = 0;
        }
        return true;
      }
      scanned_ = pending_.size();
      if (ended_) {
        if (start_ == pending_.size()) return false;
        line.assign(pending_, start_, std::string::npos);  // a last line without '\n'
        start_ = scanned_ = pending_.size();
        return true;
      }
      check_state(pending_.size() - start_ <= data::kMaxLineBytes, "seqgrad translate: line ", number,
                  ": expected a line of at most ", data::kMaxLineBytes >> 20, " MiB, found a longer one");
      if (!wait && !ready()) return false;
      read_more();
    }
  }

  // A read error of a stream given to run() (a test's), found once it ends.
  bool failed() const { return !raw_ && in_.bad(); }

 private:
  static bool ready() {
    struct pollfd p {};
    p.fd = STDIN_FILENO;
    p.events = POLLIN;
    return poll(&p, 1, 0) == 1;  // data, the end (POLLHUP) or an error: a read will not block
  }

  void read_more() {
    std::vector<char>& buffer = buffer_;
    buffer.resize(1 << 16);  // (on the heap: a small stack, ulimit -s 64, must do)
    for (;;) {
      const ssize_t n = read(STDIN_FILENO, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      check_state(n >= 0, "seqgrad translate: cannot read standard input: ", std::strerror(errno));
      if (n == 0) ended_ = true;
      pending_.append(buffer.data(), static_cast<size_t>(n));
      return;
    }
  }

  std::istream& in_;
  const bool raw_;
  std::vector<char> buffer_;
  std::string pending_;              // bytes read and not yet handed out, from start_
  size_t start_ = 0, scanned_ = 0;   // scanned_: where the search for the next '\n' goes on
  bool ended_ = false;
};

int cmd_translate(const std::vector<std::string>& words, std::ostream& out, std::ostream& err, std::istream& in) {
  Args a("seqgrad translate",
         "seqgrad translate --model MODEL [--beam K] [--nbest N] [--sample] [--batch N] [--scores] [TEXT ...]   "
         "(no TEXT: each line of stdin)",
         {{"model", "", "a checkpoint written by seqgrad train"},
          {"beam", "1", "beam size (1: greedy decoding)"},
          {"length-penalty", "0.6", "beam search ranks by log P / ((5 + length) / 6)^A (0: by log P alone)"},
          {"nbest", "1", "print the N best translations of each sentence, best first, each with its log P and a tab "
                         "(needs --beam N or more)"},
          {"sample", "false", "draw each translation token by token from the model instead (reproducible with --seed)", true},
          {"temperature", "1", "--sample: divide the logits by T (below 1: closer to greedy; above: more varied)"},
          {"top-k", "0", "--sample: draw from the K most likely tokens only (0: all)"},
          {"seed", "0", "--sample: the random seed (sentence i draws from its own stream of it)"},
          {"batch", std::to_string(kTranslateBatch),
           "sentences decoded at once, at most (from stdin: the lines that have arrived; the same translations for any N)"},
          {"threads", "0", "worker threads (0 = SEQGRAD_THREADS or all cores; the same translations for any number)"},
          {"precision", "fp32", "fp32, or bf16: matrix products take bfloat16 inputs and sum in float32"},
          {"scores", "false", "print log P(translation | source) and a tab before each translation", true}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("model"), "seqgrad translate: --model MODEL is required");
  TranslateOptions options = translate_options(a);
  const MatmulPrecisionScope precision(precision_flag(a));
  options.nbest = a.integer("nbest", 1, 64);
  options.sample = a.on("sample");
  options.temperature = static_cast<real>(a.number("temperature", 1e-3, 1e3));
  options.top_k = a.integer("top-k", 0, 1000000);
  options.seed = static_cast<uint64_t>(a.integer("seed", 0, INT64_MAX));
  for (const char* flag : {"temperature", "top-k", "seed"})
    check(!a.given(flag) || options.sample, "seqgrad translate: --", flag, " is for --sample; give --sample too");
  check(options.nbest <= options.beam, "seqgrad translate: --nbest ", options.nbest, " needs a beam at least as wide; "
        "expected --beam ", options.nbest, " or more, got ", options.beam);
  check(!options.sample || options.beam == 1, "seqgrad translate: --sample draws one translation token by token; "
        "expected no --beam, got --beam ", options.beam);
  const bool scores = a.on("scores") || options.nbest > 1;
  std::unique_ptr<Translator> t = Translator::load(a.text("model"));
  check_translates(*t, a.text("model"), "translate");
  const bool from_stdin = a.positional().empty();
  check_state(!from_stdin || &in != &std::cin || !in.bad(), "seqgrad translate: cannot read standard input: it is closed");
  const char* what = from_stdin ? "line " : "sentence ";
  size_t translated = 0;
  double seconds = 0;
  // Translates lines first_number, first_number + 1, ... and writes them out, flushed: each
  // line as the corpus reader takes a line (data/corpus.cpp): a Windows line end is not part of
  // the text, and what is not text (not UTF-8, a control character) is refused naming its line,
  // before it is translated.
  const auto translate_lines = [&](std::vector<std::string>& lines, size_t first_number) {
    for (size_t i = 0; i < lines.size(); ++i) {
      while (!lines[i].empty() && lines[i].back() == '\r') lines[i].pop_back();
      const std::string problem = data::text_line_problem(lines[i]);
      check_state(problem.empty(), "seqgrad translate: ", what, first_number + i, ": ", problem);
    }
    // A sentence of words the model never saw still "translates" (each is <unk>), and one
    // longer than the model reads is cut: say so.
    for (size_t i = 0; i < lines.size(); ++i) {
      if (t->source_is_cut(lines[i]))
        err << "warning: " << what << first_number + i << ": longer than the model's " << t->config.max_len
            << " tokens (its --max-decode); only the first " << t->config.max_len << " are translated\n";
      const std::string unknown = unknown_tokens(*t, lines[i]);
      if (!unknown.empty())
        err << "warning: " << what << first_number + i << ": " << unknown
            << " not in the model's source vocabulary (translated as <unk>)\n";
    }
    // An empty line (no token) stays an empty line, with --scores too: a model asked to
    // translate nothing would make something up, and line N of the output must stay line N's.
    std::vector<std::string> sentences;
    std::vector<bool> empty(lines.size());
    options.streams.clear();
    for (size_t i = 0; i < lines.size(); ++i) {
      empty[i] = t->source_tokens(lines[i]).empty();
      if (!empty[i]) sentences.push_back(lines[i]), options.streams.push_back(first_number + i);
    }
    std::vector<std::vector<int64_t>> sources;
    for (const std::string& sentence : sentences) sources.push_back(t->src_vocab.encode(t->source_tokens(sentence)));
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::vector<Candidate>> found = t->candidates(sources, options);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // One line per input line, or --nbest lines per input line (an empty one: as many empty lines).
    for (size_t i = 0, k = 0; i < lines.size(); ++i) {
      for (int64_t n = 0; n < options.nbest; ++n) {
        if (!empty[i] && n < static_cast<int64_t>(found[k].size())) {
          if (scores) out << format_score(found[k][static_cast<size_t>(n)].log_prob) << "\t";
          out << t->target_text(found[k][static_cast<size_t>(n)].ids);
        }
        out << "\n";
      }
      if (!empty[i]) ++k;
    }
    translated += sentences.size();
    flush_output(out, "seqgrad translate");  // each batch as soon as it is done
  };
  if (!from_stdin) {
    std::vector<std::string> lines = a.positional();
    translate_lines(lines, 1);
  } else {
    // Batches of what has arrived: wait for one line, then take those already here, up to --batch.
    InputLines input(in);
    std::vector<std::string> lines;
    std::string line;
    for (size_t number = 1; input.next(line, true, number);) {
      lines.assign(1, line);
      if (number == 1) io::strip_byte_order_mark(lines.front());  // an editor's mark, not a word
      while (static_cast<int64_t>(lines.size()) < options.batch && input.next(line, false, number + lines.size()))
        lines.push_back(line);
      translate_lines(lines, number);
      number += lines.size();
    }
    check_state(!input.failed(), "seqgrad translate: cannot read standard input: ", errno ? std::strerror(errno) : "read error");
  }
  // How fast, on stderr: stdout stays one translation per input line. Only once the
  // translations are written: a failed write is the error the user must see first.
  char rate[128];
  std::snprintf(rate, sizeof rate, "translated %zu sentences in %.2f s (%.1f sentences/s)\n", translated, seconds,
                seconds > 0 ? static_cast<double>(translated) / seconds : 0.0);
  err << rate;
  return 0;
}

int cmd_eval(const std::vector<std::string>& words, std::ostream& out) {
  Args a("seqgrad eval", "seqgrad eval --model MODEL --data FILE [--beam K] [--batch N] [--show N]",
         {{"model", "", "a checkpoint written by seqgrad train"},
          {"data", "", "a TSV file of source<TAB>reference lines"},
          {"beam", "1", "beam size (1: greedy decoding)"},
          {"length-penalty", "0.6", "beam search ranks by log P / ((5 + length) / 6)^A (0: by log P alone)"},
          {"batch", std::to_string(kTranslateBatch), "sentences decoded at once (the same scores for any N)"},
          {"threads", "0", "worker threads (0 = SEQGRAD_THREADS or all cores; the same scores for any number)"},
          {"precision", "fp32", "fp32, or bf16: matrix products take bfloat16 inputs and sum in float32"},
          {"show", "0", "also print the first N translations beside their references"}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("model") && a.given("data"), "seqgrad eval: --model MODEL and --data FILE are required");
  const TranslateOptions options = translate_options(a);
  const MatmulPrecisionScope precision(precision_flag(a));
  const int64_t show = a.integer("show", 0, 1000000);
  std::unique_ptr<Translator> t = Translator::load(a.text("model"));
  const std::vector<data::Pair> pairs = data::read_tsv_file(a.text("data"));
  // A language model translates nothing: its score is how well it predicts the targets, the
  // loss in nats per token and the perplexity exp(loss) (fairseq's eval_lm).
  if (!t->model().reads_source()) {
    for (const char* flag : {"beam", "length-penalty", "show"})
      check(!a.given(flag), "seqgrad eval: --", flag, " is for translation models; '", a.text("model"), "' is a language "
            "model (", t->config.model, "), scored by its loss on the file's targets");
    data::EncodedPairs encoded = t->encode_pairs(pairs);
    for (auto& ids : encoded.tgt)  // as in training: the model reads at most max_len tokens
      if (static_cast<int64_t>(ids.size()) > t->config.max_len) ids.resize(t->config.max_len);
    for (auto& ids : encoded.src)  // (the sources are not read; a batch still has one token of each)
      if (ids.empty()) ids.push_back(data::Vocab::kUnk);
    const double loss = mean_loss(*t, encoded);
    out << std::fixed << std::setprecision(4) << "loss=" << loss << " ppl=" << std::setprecision(2) << std::exp(loss)
        << std::defaultfloat << " n=" << pairs.size() << "\n";
    return 0;
  }
  if (show > 0) {
    std::vector<std::string> sources;
    for (int64_t i = 0; i < std::min<int64_t>(show, static_cast<int64_t>(pairs.size())); ++i) sources.push_back(pairs[i].source);
    const std::vector<std::string> hyps = t->translate(sources, options);
    for (size_t i = 0; i < hyps.size(); ++i)
      out << "  " << pairs[i].source << "\n    model:     " << hyps[i] << (hyps[i] == pairs[i].target ? "" : "   (differs)")
          << "\n    reference: " << pairs[i].target << "\n";
  }
  const Scores s = score(*t, pairs, options);
  out << std::setprecision(4) << "exact_match=" << s.exact << " edits_per_token=" << s.edits_per_token << " bleu=" << s.bleu
      << " n=" << pairs.size() << "\n";
  return 0;
}

// ================================================================================================
// seqgrad average

// The element-wise mean of several checkpoints of one model (the last few of a run, say): often
// a little better than any one of them, as fairseq's average_checkpoints finds. Every input is
// loaded and checked as translate loads it; they must agree on everything but the weights (the
// model, its options, both vocabularies and merges). Sums run in double, in the order given.
int cmd_average(const std::vector<std::string>& words, std::ostream& out) {
  Args a("seqgrad average", "seqgrad average --out AVG.safetensors MODEL MODEL ...",
         {{"out", "", "where to write the averaged checkpoint"}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("out"), "seqgrad average: --out AVG.safetensors is required");
  const std::vector<std::string>& inputs = a.positional();
  check(!inputs.empty(), "seqgrad average: expected the checkpoints to average after the flags, got none");
  io::check_writable(a.text("out"), "seqgrad average: --out");
  std::vector<io::NamedPath> named;
  for (const std::string& path : inputs) named.push_back({"the input", path});
  io::check_no_overlap(named, {{"--out", a.text("out")}}, "seqgrad average");

  std::unique_ptr<Translator> mean = Translator::load(inputs[0]);
  const std::map<std::string, std::string> model = mean->metadata();
  const auto parameters = mean->module().named_parameters();
  std::vector<std::vector<double>> sums;
  for (const auto& [name, p] : parameters) sums.emplace_back(p.value().data(), p.value().data() + p.value().numel());
  for (size_t k = 1; k < inputs.size(); ++k) {
    const std::unique_ptr<Translator> other = Translator::load(inputs[k]);
    const std::map<std::string, std::string> theirs = other->metadata();
    for (const auto& [key, value] : model) {
      const auto it = theirs.find(key);
      check_state(it != theirs.end() && it->second == value, "seqgrad average: '", inputs[k], "' is not a checkpoint of the "
                  "same model as '", inputs[0], "': its ", key, " differs; expected checkpoints of one model (one run)");
    }
    const auto their_parameters = other->module().named_parameters();
    for (size_t i = 0; i < parameters.size(); ++i) {
      const Tensor& t = their_parameters[i].second.value();
      for (int64_t j = 0; j < t.numel(); ++j) sums[i][static_cast<size_t>(j)] += t.data()[j];
    }
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    Variable parameter = parameters[i].second;  // a handle to the model's own parameter
    Tensor& t = parameter.value();
    for (int64_t j = 0; j < t.numel(); ++j) t.data()[j] = static_cast<real>(sums[i][static_cast<size_t>(j)] / inputs.size());
  }
  mean->save(a.text("out"));
  out << "averaged " << inputs.size() << " checkpoints into " << a.text("out") << "\n";
  return 0;
}

// ================================================================================================
// seqgrad sample

// Text from a language model (nn/transformer/language_model.h): each sample drawn token by token
// from softmax(logits / T), after <bos> and the prompt, until <eos> or --max-len tokens. Sample
// i draws from its own stream of --seed (as translate --sample's sentence i), so the first
// samples are the same whatever --n.
int cmd_sample(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  Args a("seqgrad sample", "seqgrad sample --model LM.safetensors [--prompt TEXT] [--n N] [--temperature T] [--top-k K]",
         {{"model", "", "a language model written by seqgrad train --arch lm"},
          {"prompt", "", "text each sample continues, read as the model's target side (default: none)"},
          {"n", "5", "samples to draw, one a line"},
          {"temperature", "1", "divide the logits by T (below 1: likelier text; above: more varied)"},
          {"top-k", "0", "draw from the K most likely tokens only (0: all)"},
          {"max-len", "", "tokens to draw after the prompt, at most (default: the model's --max-decode)"},
          {"seed", "0", "the random seed (sample i draws from its own stream of it)"},
          {"threads", "0", "worker threads (0 = SEQGRAD_THREADS or all cores; the same samples for any number)"},
          {"scores", "false", "print log P(sample | prompt) and a tab before each sample", true}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("model"), "seqgrad sample: --model LM.safetensors is required");
  check(a.positional().empty(), "seqgrad sample: unexpected argument '", a.positional().empty() ? "" : a.positional()[0],
        "' (the text to continue goes in --prompt)");
  const int64_t n = a.integer("n", 1, 100000);
  const auto temperature = static_cast<real>(a.number("temperature", 1e-3, 1e3));
  const int64_t top_k = a.integer("top-k", 0, 1000000);
  const auto seed = static_cast<uint64_t>(a.integer("seed", 0, INT64_MAX));
  if (const int64_t threads = a.integer("threads", 0, 256); threads > 0) set_num_threads(static_cast<int>(threads));
  const std::string path = a.text("model");
  std::unique_ptr<Translator> t = Translator::load(path);
  check_state(!t->model().reads_source(), "seqgrad sample: '", path, "' is a translation model (", t->config.model,
              "); translate with it (seqgrad translate --sample draws translations)");
  const int64_t max_len = a.given("max-len") ? a.integer("max-len", 1, t->config.max_len) : t->config.max_len;
  const std::string problem = data::text_line_problem(a.text("prompt"));
  check(problem.empty(), "seqgrad sample: --prompt: ", problem);
  const std::vector<int64_t> prompt = t->tgt_vocab.encode(t->target_tokens(a.text("prompt")));
  check(static_cast<int64_t>(prompt.size()) <= t->config.max_len, "seqgrad sample: the prompt has ", prompt.size(),
        " tokens; the model reads at most ", t->config.max_len);
  const auto unknown = std::count(prompt.begin(), prompt.end(), data::Vocab::kUnk);
  if (unknown > 0)
    err << "note: " << unknown << " of the prompt's " << prompt.size() << " tokens are not in the model's vocabulary "
        << "(read as <unk>)\n";
  // The prompt as the model's "source" (1, P); an empty one is a single <pad>, which is no token.
  Tensor src = zeros({1, std::max<int64_t>(1, static_cast<int64_t>(prompt.size()))});
  for (size_t i = 0; i < prompt.size(); ++i) src.data()[i] = static_cast<real>(prompt[i]);
  const auto options = nn::DecodeOptions().with_max_len(max_len).with_temperature(temperature).with_top_k(top_k);
  for (int64_t i = 0; i < n; ++i) {
    Generator generator(sample_stream_seed(seed, static_cast<uint64_t>(i)));
    const nn::DecodeResult r = nn::sample(t->model(), src, {}, options, generator);
    std::vector<int64_t> ids = prompt;
    ids.insert(ids.end(), r.tokens[0].begin(), r.tokens[0].end());
    if (a.on("scores")) out << std::setprecision(6) << r.log_probs[0] << "\t";
    out << t->target_text(ids) << "\n";
  }
  return 0;
}

int cmd_attention(const std::vector<std::string>& words, std::ostream& out) {
  Args a("seqgrad attention",
         "seqgrad attention --model MODEL [--svg OUT.svg] [--html OUT.html] [--tree OUT.svg] TEXT",
         {{"model", "", "a checkpoint written by seqgrad train"},
          {"svg", "", "where to write the heatmap (the last layer, the mean of its heads, unless --layer/--head/--grid)"},
          {"layer", "", "the decoder layer to draw, from 0 (default: the last)"},
          {"head", "mean", "the head to draw, from 0, or mean"},
          {"grid", "false", "draw every layer (a row) and head (a column) in --svg", true},
          {"html", "", "where to write the attention explorer, one self-contained page"},
          {"tree", "", "where to draw the beam search's tree (needs --beam 2 or more)"},
          {"beam", "1", "beam size: 1 decodes greedily; more shows the alternatives (--html) and the tree (--tree)"}});
  a.parse(words);
  if (a.help_requested()) return out << a.help(), 0;
  check(a.given("model") && (a.given("svg") || a.given("html") || a.given("tree")),
        "seqgrad attention: --model MODEL and at least one of --svg OUT.svg, --html OUT.html, --tree OUT.svg are required");
  std::vector<io::NamedPath> outputs;
  for (const char* flag : {"svg", "html", "tree"})
    if (a.given(flag)) outputs.push_back({std::string("--") + flag, a.text(flag)});
  io::check_no_overlap({{"--model", a.text("model")}}, outputs, "seqgrad attention");
  check(!a.positional().empty(), "seqgrad attention: give the sentence to translate, e.g. seqgrad attention --model m "
        "--svg a.svg \"billy eats a banana\"");
  check(!a.on("grid") || (!a.given("layer") && !a.given("head")),
        "seqgrad attention: --grid draws every layer and head; expected no --layer or --head with it");
  check(a.given("svg") || !(a.on("grid") || a.given("layer") || a.given("head")),
        "seqgrad attention: --layer, --head and --grid choose what --svg draws; expected --svg OUT.svg with them");
  const int64_t beam = a.integer("beam", 1, 64);
  check(!a.given("tree") || beam > 1, "seqgrad attention: --tree draws the beam search; expected --beam 2 or more, got ",
        beam);
  std::string sentence;
  for (const std::string& w : a.positional()) sentence += (sentence.empty() ? "" : " ") + w;
  std::unique_ptr<Translator> t = Translator::load(a.text("model"));
  check_translates(*t, a.text("model"), "attention");
  const AttentionView view = t->attention(sentence, beam);
  if (a.given("svg")) {
    if (a.on("grid")) {
      attention_grid(view).save(a.text("svg"));
    } else {
      const int64_t layers = static_cast<int64_t>(view.layers.size());
      const int64_t layer = a.given("layer") ? a.integer("layer", 0, 1000000) : layers - 1;
      const int64_t head = a.text("head") == "mean" ? -1 : a.integer("head", 0, 1000000);
      const viz::Heatmap map = attention_map(view, layer, head);
      map.save(a.text("svg"));
      out << map.to_text();
    }
    out << "wrote " << a.text("svg") << "\n";
  }
  if (a.given("tree")) {
    beam_tree(view, t->tgt_vocab).save(a.text("tree"));
    out << "wrote " << a.text("tree") << "\n";
  }
  if (a.given("html")) {
    io::write_file_atomic(a.text("html"), explorer_html(view, t->tgt_vocab), "seqgrad attention");
    out << "wrote " << a.text("html") << "\n";
  }
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
  if (command == "data") return cmd_data(rest, out, err);
  if (command == "train") return cmd_train(rest, out);
  if (command == "translate") return cmd_translate(rest, out, err, in);
  if (command == "eval") return cmd_eval(rest, out);
  if (command == "attention") return cmd_attention(rest, out);
  if (command == "average") return cmd_average(rest, out);
  if (command == "sample") return cmd_sample(rest, out, err);
  check(false, "seqgrad: unknown command '", command, "'; expected data, train, translate, eval, attention, sample or "
        "average (see 'seqgrad --help')");
  return 2;
}

}  // namespace

int run(const std::vector<std::string>& words, std::ostream& out, std::ostream& err, std::istream& in) {
  const std::string who = words.empty() ? "seqgrad" : "seqgrad " + words[0];  // for messages
  // A component registered twice (two files, one name) was noted before main(): say where, and
  // do nothing else, since which of the two the tool would use is not defined.
  if (!nn::registration_problems().empty()) {
    for (const std::string& problem : nn::registration_problems()) err << "error: " << problem << "\n";
    return 2;
  }
  try {
    const int code = dispatch(words, out, err, in);
    // (A run stopped by a signal keeps the signal's exit code: its terminal may be gone.)
    if (code < 128) flush_output(out, who);
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
