// examples/seqgrad/translator.cpp - building, training, decoding and saving any model kind.
#include "examples/seqgrad/translator.h"

#include <algorithm>
#include <filesystem>

#include "data/metrics.h"
#include "io/safetensors.h"
#include "nn/core/checkpoint.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "tensor/allocator.h"
#include "tensor/check.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"

namespace seqgrad::cli {

constexpr const char* kFormat = "seqgrad-translator-1";

// ================================================================================================
// Configuration <-> JSON

ModelConfig ModelConfig::resolved() const {
  ModelConfig c = *this;
  const nn::ModelKind& kind = nn::model_kind(model);
  c.options = nn::resolve_options(
      kind, [&](const nn::Option& o) { const io::Json* v = options.json().find(o.key); return v ? *v : io::Json(); },
      [](const nn::Option& o) { return cat("the model option '", o.key, "'"); });
  return c;
}

io::Json ModelConfig::to_json() const {
  io::Json j = io::Json::object();
  j.set("model", model);
  for (const auto& [key, value] : options.json().as_object()) j.set(key, value);
  j.set("max_len", max_len).set("src_tokens", src_tokens).set("tgt_tokens", tgt_tokens);
  return j;
}

ModelConfig ModelConfig::from_json(const io::Json& j) {
  // The same ranges and names seqgrad train accepts: a checkpoint whose configuration is outside
  // them was edited or damaged, and must not build a model (layers = 10000000 once allocated
  // until the machine ran out of memory).
  check_state(j.is_object(), "the model configuration must be a JSON object");
  auto get = [&](const char* key) -> const io::Json& {
    const io::Json* v = j.find(key);
    check_state(v != nullptr, "the model configuration has no '", key, "'");
    return *v;
  };
  auto one_of = [&](const char* key, const std::vector<std::string>& names) {
    const io::Json& v = get(key);
    const bool known = v.is_string() && std::find(names.begin(), names.end(), v.as_string()) != names.end();
    check_state(known, "the model configuration's '", key, "' must be one of ", nn::join_names(names, ", "), "; got ",
                v.dump());
    return v.as_string();
  };
  // A name a registry of this build does not have may be a component of someone's own (a cell,
  // a score, a model kind in a file of theirs): the message says how to build it in.
  auto registered = [&](const std::string& key, const io::Json& v, const std::vector<std::string>& names) {
    check_state(!v.is_string() || std::find(names.begin(), names.end(), v.as_string()) != names.end(),
                "the model configuration's '", key, "' is ", v.dump(), ", which this seqgrad does not have (it has ",
                nn::join_names(names, ", "), "); if it is a component of your own, build it in: make seqgrad "
                "EXTRA=its_file.cpp");
  };
  ModelConfig c;
  registered("model", get("model"), nn::model_names());
  c.model = one_of("model", nn::model_names());
  const io::Json& max_len = get("max_len");
  check_state(max_len.is_integer() && max_len.as_int64() >= 1 && max_len.as_int64() <= kMaxDecode,
              "the model configuration's 'max_len' must be a whole number from 1 to ", kMaxDecode, ", got ", max_len.dump());
  c.max_len = max_len.as_int64();
  for (const char* key : {"src_tokens", "tgt_tokens"}) registered(key, get(key), data::tokenizers().names());
  c.src_tokens = one_of("src_tokens", data::tokenizers().names());
  c.tgt_tokens = one_of("tgt_tokens", data::tokenizers().names());
  // Every option the model takes, from the file; one a file written before it existed lacks
  // takes its default (Luong, global, D = 3, the last state as the context, residual on).
  try {
    c.options = nn::resolve_options(
        nn::model_kind(c.model),
        [&](const nn::Option& o) {
          const io::Json* v = j.find(o.key);
          // An option every checkpoint has written since the first format is missing only from a
          // damaged file; one added later takes its default when a file has none.
          check_state(v != nullptr || !o.in_every_checkpoint, "the model configuration has no '", o.key, "'");
          if (v && o.from_registry) registered(o.key, *v, o.choices());
          return v ? *v : io::Json();
        },
        [](const nn::Option& o) { return cat("the model configuration's '", o.key, "'"); });
  } catch (const std::invalid_argument& e) {  // a rule between options (the kind's check)
    throw std::runtime_error(cat("the model configuration: ", e.what()));
  }
  return c;
}

std::string first_difference(const ModelConfig& a, const ModelConfig& b, const char* a_name, const char* b_name) {
  const io::Json ja = a.to_json(), jb = b.to_json();
  for (const auto& [key, value] : ja.as_object()) {
    const io::Json* other = jb.find(key);
    if (other == nullptr || !(*other == value))
      return cat(key, " is ", value.dump(), " in ", a_name, " and ", other ? other->dump() : "missing", " in ", b_name);
  }
  return "";
}

// ================================================================================================
// Building

Translator::Translator(const ModelConfig& c, data::Vocab src, data::Vocab tgt,
                       std::shared_ptr<data::Tokenizer> src_cut, std::shared_ptr<data::Tokenizer> tgt_cut)
    : config(c.resolved()), src_vocab(std::move(src)), tgt_vocab(std::move(tgt)),
      src_tokenizer(src_cut ? std::move(src_cut) : data::make_tokenizer(config.src_tokens)),
      tgt_tokenizer(tgt_cut ? std::move(tgt_cut) : data::make_tokenizer(config.tgt_tokens)) {
  // The kind builds itself from its options; from here on it is only an EncoderDecoder.
  nn::ModelContext context;
  context.name = config.model;
  context.src_vocab = src_vocab.size();
  context.tgt_vocab = tgt_vocab.size();
  context.max_len = config.max_len;
  model_ = nn::model_kind(config.model).build(config.options, context);
  module_ = &model_->module();
}

const nn::Module& Translator::module() const { return *module_; }
nn::Module& Translator::module() { return *module_; }

std::vector<std::string> Translator::source_tokens(const std::string& text) const {
  // The model reads the first max_len tokens of a source: a longer one is cut here, before a
  // bpe side would encode a megabyte it then throws away.
  return src_tokenizer->encode(text, static_cast<size_t>(config.max_len));
}
bool Translator::source_is_cut(const std::string& text) const {
  const size_t max_len = static_cast<size_t>(config.max_len);
  return src_tokenizer->encode(text, max_len + 1).size() > max_len;
}
std::vector<std::string> Translator::target_tokens(const std::string& text) const {
  return tgt_tokenizer->encode(text);
}
std::string Translator::target_text(const std::vector<int64_t>& ids) const {
  return tgt_tokenizer->decode(tgt_vocab.decode(ids));
}
data::EncodedPairs Translator::encode_pairs(const std::vector<data::Pair>& pairs) const {
  data::EncodedPairs e;
  for (const data::Pair& p : pairs) {
    e.src.push_back(src_vocab.encode(source_tokens(p.source)));
    e.tgt.push_back(tgt_vocab.encode(target_tokens(p.target)));
  }
  return e;
}

// ================================================================================================
// Training and decoding

Variable Translator::loss(const data::Batch& b, real label_smoothing) {
  const auto opt = nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad).with_label_smoothing(label_smoothing);
  return model_->training_loss(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths, b.tgt_out, opt);
}

std::vector<std::vector<Candidate>> Translator::candidates(const std::vector<std::vector<int64_t>>& sources,
                                                           const TranslateOptions& o) {
  check(o.beam >= 1, "seqgrad translate: expected a beam size >= 1, got ", o.beam);
  check(o.batch >= 1, "seqgrad translate: expected a batch of >= 1 sentences, got ", o.batch);
  check(o.nbest >= 1 && o.nbest <= o.beam, "seqgrad translate: --nbest ", o.nbest, " needs a beam at least as wide; "
        "expected --beam ", o.nbest, " or more, got ", o.beam);
  check(!o.sample || o.beam == 1, "seqgrad translate: --sample draws one translation token by token; expected --beam 1, "
        "got ", o.beam);
  module().eval();
  // Each source as the model takes it: an empty line still gets a (short) translation, and a
  // long one is cut to max_len.
  std::vector<std::vector<int64_t>> prepared = sources;
  for (auto& s : prepared) {
    if (s.empty()) s.push_back(data::Vocab::kUnk);
    if (static_cast<int64_t>(s.size()) > config.max_len) s.resize(config.max_len);
  }
  const auto options = nn::DecodeOptions()
                           .with_max_len(config.max_len)
                           .with_beam_size(o.beam)
                           .with_length_penalty(o.length_penalty)
                           .with_temperature(o.temperature)
                           .with_top_k(o.top_k)
                           .with_keep_search(o.nbest > 1);
  std::vector<std::vector<Candidate>> out(prepared.size());
  // Sampling: one sentence at a time, each from its own generator.
  if (o.sample) {
    for (size_t i = 0; i < prepared.size(); ++i) {
      check(o.streams.empty() || o.streams.size() == prepared.size(), "seqgrad translate: expected a stream per "
            "sentence, got ", o.streams.size(), " for ", prepared.size());
      Generator generator(sample_stream_seed(o.seed, o.streams.empty() ? i : o.streams[i]));
      const std::vector<int64_t> length{static_cast<int64_t>(prepared[i].size())};
      const nn::DecodeResult r = nn::sample(*model_, data::pad_sequences({prepared[i]}), length, options, generator);
      out[i] = {{r.tokens[0], r.log_probs[0], r.log_probs[0]}};
    }
    return out;
  }
  // Batches of sentences of similar length waste little work on padding: decode in order of
  // length (ties in input order), `batch` sentences at a time, and put each result back in its
  // input position. A sentence's result does not depend on the others in its batch (the
  // padding is masked, and every kernel sums in an order that depends on its own row alone), so
  // this is the same, bit for bit, as decoding one sentence at a time.
  std::vector<size_t> order(prepared.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prepared[a].size() < prepared[b].size(); });
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(o.batch)) {
    const size_t end = std::min(order.size(), start + static_cast<size_t>(o.batch));
    std::vector<std::vector<int64_t>> chunk;
    std::vector<int64_t> lengths;
    for (size_t i = start; i < end; ++i) {
      chunk.push_back(prepared[order[i]]);
      lengths.push_back(static_cast<int64_t>(chunk.back().size()));
    }
    const nn::DecodeResult r = nn::decode(*model_, data::pad_sequences(chunk), lengths, options);  // src (B, S)
    for (size_t i = start; i < end; ++i) {
      std::vector<Candidate>& mine = out[order[i]];
      mine.push_back({r.tokens[i - start], r.log_probs[i - start], r.log_probs[i - start]});
      if (o.nbest == 1) continue;
      // The n best finished hypotheses the search kept, by its score (the first is the answer).
      std::vector<const nn::SearchNode*> finished;
      for (const nn::SearchNode& node : r.search[i - start])
        if (node.finished) finished.push_back(&node);
      std::stable_sort(finished.begin(), finished.end(),
                       [](const nn::SearchNode* a, const nn::SearchNode* b) { return a->score > b->score; });
      mine.clear();
      for (size_t k = 0; k < finished.size() && static_cast<int64_t>(k) < o.nbest; ++k)
        mine.push_back({finished[k]->tokens, finished[k]->log_prob, finished[k]->score});
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> Translator::translate_ids(const std::vector<std::vector<int64_t>>& sources, int64_t beam,
                                                             std::vector<double>* log_probs, int64_t batch) {
  TranslateOptions o;
  o.beam = beam;
  o.batch = batch;
  const std::vector<std::vector<Candidate>> found = candidates(sources, o);
  std::vector<std::vector<int64_t>> out;
  if (log_probs) log_probs->clear();
  for (const std::vector<Candidate>& c : found) {
    out.push_back(c[0].ids);
    if (log_probs) log_probs->push_back(c[0].log_prob);
  }
  return out;
}

std::vector<std::string> Translator::translate(const std::vector<std::string>& sentences, const TranslateOptions& options) {
  std::vector<std::vector<int64_t>> sources;
  for (const std::string& s : sentences) sources.push_back(src_vocab.encode(source_tokens(s)));
  std::vector<std::string> out;
  for (const std::vector<Candidate>& c : candidates(sources, options)) out.push_back(target_text(c[0].ids));
  return out;
}

std::vector<std::string> Translator::translate(const std::vector<std::string>& sentences, int64_t beam,
                                               std::vector<double>* log_probs, int64_t batch) {
  std::vector<std::vector<int64_t>> sources;
  for (const std::string& s : sentences) sources.push_back(src_vocab.encode(source_tokens(s)));
  std::vector<std::string> out;
  for (const auto& ids : translate_ids(sources, beam, log_probs, batch)) out.push_back(target_text(ids));
  return out;
}

AttentionView Translator::attention(const std::string& sentence, int64_t beam) {
  check(beam >= 1, "seqgrad attention: expected a beam size >= 1, got ", beam);
  module().eval();
  AttentionView v;
  v.sentence = sentence;
  v.beam = beam;
  v.source = source_tokens(sentence);
  check(!v.source.empty(), "seqgrad attention: the sentence is empty");
  if (static_cast<int64_t>(v.source.size()) > config.max_len) v.source.resize(config.max_len);
  const std::vector<int64_t> ids = src_vocab.encode(v.source);
  const Tensor src = data::pad_sequences({ids});
  const std::vector<int64_t> lengths{static_cast<int64_t>(ids.size())};
  const auto options = nn::DecodeOptions().with_max_len(config.max_len).with_beam_size(beam).with_need_weights(true)
                           .with_keep_search(beam > 1);
  const nn::DecodeResult d = nn::decode(*model_, src, lengths, options);
  check(!d.cross_attention.empty() && !d.cross_attention[0].empty(), "seqgrad attention: model '", config.model,
        "' has no attention (try gru-attn, lstm-attn, gnmt or transformer)");
  v.layers = d.cross_attention[0];  // per layer (NH, T_out, S)
  if (beam > 1) v.search = d.search[0];
  // One label per row of weights, one row per step: special tokens the model emitted (an
  // untrained model may emit <pad> or <bos>) keep their rows and their names.
  v.output = tgt_vocab.decode(d.tokens[0], /*strip_special=*/false);
  if (v.layers[0].size(1) > static_cast<int64_t>(v.output.size())) v.output.push_back("<eos>");
  v.translation = target_text(d.tokens[0]);
  return v;
}

Tensor AttentionView::mean_of_last_layer() const { return mean(layers.back(), 0); }  // (T_out, S)

// ================================================================================================
// Checkpoints

std::map<std::string, std::string> Translator::metadata() const {
  io::Json src = io::Json::array(), tgt = io::Json::array();
  for (const std::string& t : src_vocab.tokens()) src.push_back(t);
  for (const std::string& t : tgt_vocab.tokens()) tgt.push_back(t);
  std::map<std::string, std::string> meta{{"seqgrad.format", kFormat},
                                          {"seqgrad.config", config.to_json().dump()},
                                          {"seqgrad.src_vocab", src.dump()},
                                          {"seqgrad.tgt_vocab", tgt.dump()}};
  // What a side's tokenizer learned, under "seqgrad.src_NAME" ("seqgrad.src_bpe": its merges).
  auto learned = [&](const char* side, const std::string& name, const data::Tokenizer& tokenizer) {
    if (!tokenizer.learns()) return;
    io::Json list = io::Json::array();
    for (const std::string& entry : tokenizer.learned()) list.push_back(entry);
    meta[cat("seqgrad.", side, "_", name)] = list.dump();
  };
  learned("src", config.src_tokens, *src_tokenizer);
  learned("tgt", config.tgt_tokens, *tgt_tokenizer);
  return meta;
}

void Translator::save(const std::string& path) const { nn::save(module(), path, metadata()); }

std::unique_ptr<Translator> Translator::load(const std::string& path) {
  const std::map<std::string, std::string> meta = io::read_metadata(path);
  const auto format = meta.find("seqgrad.format");
  check_state(format != meta.end() && format->second == kFormat, "seqgrad: '", path,
              "' is not a seqgrad translation model (its metadata has no seqgrad.format = ", kFormat, ")");
  auto entry = [&](const char* key) -> const std::string& {
    const auto it = meta.find(key);
    check_state(it != meta.end(), "seqgrad: '", path, "' has no ", key, " in its metadata");
    return it->second;
  };
  // What a metadata entry's JSON list of strings makes (a vocabulary, a merge list): any error,
  // in the JSON or in what is made of it, names the file and the key.
  auto from_strings = [&](const char* key, auto make) {
    const std::string& text = entry(key);  // (a missing entry says so itself)
    try {
      const io::Json list = io::parse_json(text);  // kept alive: the loop refers into it
      std::vector<std::string> items;
      for (const io::Json& t : list.as_array()) items.push_back(t.as_string());
      return make(items);
    } catch (const std::exception& e) {
      throw std::runtime_error(cat("seqgrad: '", path, "': ", key, ": ", e.what()));
    }
  };
  // A side's vocabulary: duplicates and missing special tokens are refused by from_tokens. A
  // token is what a tokenizer of its side can make: no control character (a "\n" in a token
  // made one input line many output lines; a tab broke --scores' columns), and no space except
  // the space of a char side, one token of its own.
  auto vocab = [&](const char* key, const std::string& kind, const data::Tokenizer& tokenizer) {
    return from_strings(key, [&](const std::vector<std::string>& tokens) {
      for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string& tok = tokens[i];
        bool control = tok.empty(), space = false;
        for (unsigned char c : tok) {
          control = control || c < 0x20 || c == 0x7F;
          space = space || c == ' ';
        }
        const bool spaces = tokenizer.space_is_a_token();
        check_state(!control && (!space || (spaces && tok == " ")), "token ", i, " is ", io::Json(tok).dump(),
                    "; a token of a ", kind, " side is not empty and holds no control character",
                    spaces ? "" : " and no space");
      }
      return data::Vocab::from_tokens(tokens);
    });
  };
  // A side's tokenizer, with what it learned (a bpe side's merges, "e s", "es t", ..., checked
  // line by line); a tokenizer that learns nothing has no entry.
  auto side_tokenizer = [&](const char* side, const std::string& name) {
    std::shared_ptr<data::Tokenizer> made = data::make_tokenizer(name);
    if (!made->learns()) return made;
    return from_strings(cat("seqgrad.", side, "_", name).c_str(), [&](const std::vector<std::string>& learned) {
      made->restore(learned);
      return made;
    });
  };
  ModelConfig config;
  try {
    config = ModelConfig::from_json(io::parse_json(entry("seqgrad.config")));
  } catch (const std::exception& e) {
    throw std::runtime_error(cat("seqgrad: '", path, "': ", e.what()));
  }
  // The configuration is checked against the tensors before anything large is built: the model
  // it describes may take little more memory than the file's tensors (twice that, for the
  // initialisers' temporaries, and 64 MB for tables such as the positional encoding). A larger
  // model cannot match the file, and building it could take all the memory there is; strict
  // loading below then checks every name and shape.
  std::error_code ec;
  const uintmax_t file_bytes = std::filesystem::file_size(path, ec);
  const int64_t budget = 2 * static_cast<int64_t>(ec ? 0 : file_bytes) * static_cast<int64_t>(sizeof(real)) / 4 + (int64_t(64) << 20);
  std::unique_ptr<Translator> t;
  {
    const AllocationBudget limit(budget, cat("seqgrad: '", path, "': its configuration (", config.to_json().dump(),
                                             ") describes a model far larger than the tensors in the file; building it"));
    std::shared_ptr<data::Tokenizer> src_cut = side_tokenizer("src", config.src_tokens),
                                     tgt_cut = side_tokenizer("tgt", config.tgt_tokens);
    t = std::make_unique<Translator>(config, vocab("seqgrad.src_vocab", config.src_tokens, *src_cut),
                                     vocab("seqgrad.tgt_vocab", config.tgt_tokens, *tgt_cut), src_cut, tgt_cut);
  }
  // A resumable checkpoint also holds the optimizer's buffers, under "optimizer.": those are the
  // resume code's (resume.cpp); every model tensor must still be there, with its shape.
  nn::load(t->module(), path, /*strict=*/true, meta.count(kTrainStateKey) ? kOptimizerPrefix : "");
  t->module().eval();
  return t;
}

// ================================================================================================
// Scores

Scores score(Translator& t, const std::vector<data::Pair>& pairs, int64_t beam, int64_t batch) {
  TranslateOptions o;
  o.beam = beam;
  o.batch = batch;
  return score(t, pairs, o);
}

Scores score(Translator& t, const std::vector<data::Pair>& pairs, const TranslateOptions& options) {
  // Scored on the target's tokens, but on words when they are pieces of words (bpe): a wrong
  // word then counts once, however many pieces it has (as BLEU is reported after BPE is undone).
  auto tokens = [&t](const std::string& text) {
    return t.tgt_tokenizer->pieces_of_words() ? data::split_whitespace(text) : t.target_tokens(text);
  };
  std::vector<std::string> sources;
  std::vector<data::Tokens> refs, hyps;
  for (const data::Pair& p : pairs) {
    sources.push_back(p.source);
    refs.push_back(tokens(p.target));
  }
  for (const std::string& h : t.translate(sources, options)) hyps.push_back(tokens(h));
  return {data::exact_match(hyps, refs), data::edits_per_token(hyps, refs), data::bleu(hyps, refs)};
}

double mean_loss(Translator& t, const data::EncodedPairs& pairs) {
  NoGradGuard no_grad;
  t.module().eval();
  double total = 0;
  int64_t batches = 0;
  std::vector<int64_t> lengths;
  for (const auto& s : pairs.src) lengths.push_back(static_cast<int64_t>(s.size()));
  for (const auto& idx : data::make_batches(lengths, 64, 0)) {
    total += t.loss(pairs.batch(idx), 0).item();
    ++batches;
  }
  t.module().train();
  return batches ? total / static_cast<double>(batches) : 0;
}

}  // namespace seqgrad::cli
