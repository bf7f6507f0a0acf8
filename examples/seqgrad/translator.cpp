// examples/seqgrad/translator.cpp - building, training, decoding and saving the four model kinds.
#include "examples/seqgrad/translator.h"

#include <algorithm>
#include <filesystem>

#include "data/metrics.h"
#include "io/safetensors.h"
#include "nn/checkpoint.h"
#include "nn/decoding.h"
#include "nn/loss.h"
#include "tensor/allocator.h"
#include "tensor/check.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"

namespace seqgrad::cli {

constexpr const char* kFormat = "seqgrad-translator-1";

// ================================================================================================
// Configuration <-> JSON

io::Json ModelConfig::to_json() const {
  io::Json j = io::Json::object();
  j.set("model", model).set("attention", attention).set("layers", layers).set("hidden", hidden).set("dim", dim);
  j.set("heads", heads).set("ffn", ffn).set("max_len", max_len).set("dropout", dropout);
  j.set("bidirectional", bidirectional).set("src_tokens", src_tokens).set("tgt_tokens", tgt_tokens);
  j.set("decoder", decoder).set("window", window).set("window_size", window_size).set("context", context);
  j.set("hard_attention", hard_attention).set("reverse_source", reverse_source).set("residual", residual);
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
  auto whole = [&](const char* key, int64_t lo, int64_t hi) {
    const io::Json& v = get(key);
    check_state(v.is_integer() && v.as_int64() >= lo && v.as_int64() <= hi, "the model configuration's '", key,
                "' must be a whole number from ", lo, " to ", hi, ", got ", v.dump());
    return v.as_int64();
  };
  auto one_of = [&](const char* key, const std::vector<std::string>& names) {
    const io::Json& v = get(key);
    const bool known = v.is_string() && std::find(names.begin(), names.end(), v.as_string()) != names.end();
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    check_state(known, "the model configuration's '", key, "' must be one of ", list, "; got ", v.dump());
    return v.as_string();
  };
  ModelConfig c;
  c.model = one_of("model", kModelNames);
  c.attention = one_of("attention", kScoreNames);
  c.layers = whole("layers", 1, kMaxLayers);
  c.hidden = whole("hidden", 1, kMaxWidth);
  c.dim = whole("dim", 1, kMaxWidth);
  c.heads = whole("heads", 1, kMaxHeads);
  c.ffn = whole("ffn", 1, kMaxFeedForward);
  c.max_len = whole("max_len", 1, kMaxDecode);
  const io::Json& dropout = get("dropout");
  check_state(dropout.is_number() && dropout.as_double() >= 0 && dropout.as_double() <= kMaxDropout,
              "the model configuration's 'dropout' must be a number from 0 to ", kMaxDropout, ", got ",
              dropout.dump());
  c.dropout = dropout.as_double();
  check_state(get("bidirectional").is_bool(), "the model configuration's 'bidirectional' must be true or false");
  c.bidirectional = get("bidirectional").as_bool();
  c.src_tokens = one_of("src_tokens", kTokenizerNames);
  c.tgt_tokens = one_of("tgt_tokens", kTokenizerNames);
  // Checkpoints written before these choices existed have none of them: Luong, global, D = 3,
  // the last state as the context.
  if (j.find("decoder")) c.decoder = one_of("decoder", kDecoderNames);
  if (j.find("window")) c.window = one_of("window", kWindowNames);
  if (j.find("window_size")) c.window_size = whole("window_size", 1, kMaxDecode);
  if (j.find("context")) c.context = one_of("context", kContextNames);
  auto flag = [&](const char* key, bool& field) {
    if (!j.find(key)) return;  // older checkpoints: the default (off; residual: on)
    check_state(get(key).is_bool(), "the model configuration's '", key, "' must be true or false");
    field = get(key).as_bool();
  };
  flag("hard_attention", c.hard_attention);
  flag("reverse_source", c.reverse_source);
  flag("residual", c.residual);
  check_state(c.model != "gnmt" || c.layers >= 2, "the model configuration's 'layers' must be 2 or more for gnmt, got ",
              c.layers);
  check_state(c.model != "transformer" || c.dim % c.heads == 0, "the model configuration's 'dim' (", c.dim,
              ") must be a multiple of 'heads' (", c.heads, ")");
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

Translator::Translator(const ModelConfig& c, data::Vocab src, data::Vocab tgt, data::Bpe src_merges, data::Bpe tgt_merges)
    : config(c), src_vocab(std::move(src)), tgt_vocab(std::move(tgt)), src_bpe(std::move(src_merges)),
      tgt_bpe(std::move(tgt_merges)) {
  const int64_t S = src_vocab.size(), V = tgt_vocab.size();
  const real dropout = static_cast<real>(c.dropout);
  const std::string cell = c.model.substr(0, c.model.find('-'));  // "lstm-attn" -> "lstm"
  // Build the kind asked for; from here on it is only an EncoderDecoder (and a Module).
  auto keep = [&](auto model) {
    module_ = model;
    model_ = model.get();
  };
  if (c.model == "rnn" || c.model == "gru" || c.model == "lstm") {
    keep(std::make_shared<nn::Seq2Seq>(nn::Seq2SeqOptions(S, V).with_cell(cell).with_num_layers(c.layers)
                                                 .with_hidden_size(c.hidden).with_embed_dim(c.dim)
                                                 .with_bidirectional(c.bidirectional).with_dropout(dropout)
                                                 .with_context(c.context == "mean"  ? nn::ContextKind::Mean
                                                               : c.context == "max" ? nn::ContextKind::Max
                                                                                    : nn::ContextKind::Last)));
  } else if (c.model == "gru-attn" || c.model == "lstm-attn") {
    keep(std::make_shared<nn::AttentionSeq2Seq>(
        nn::AttentionSeq2SeqOptions(S, V).with_cell(cell).with_num_layers(c.layers).with_hidden_size(c.hidden)
            .with_embed_dim(c.dim).with_bidirectional(c.bidirectional).with_dropout(dropout)
            .with_score(nn::parse_score(c.attention)).with_max_source_len(c.max_len)
            .with_style(c.decoder == "bahdanau" ? nn::AttentionStyle::Bahdanau : nn::AttentionStyle::Luong)
            .with_local(c.window != "global", c.window_size, /*monotonic=*/c.window == "local-m")
            .with_hard(c.hard_attention)));
  } else if (c.model == "gnmt") {
    keep(std::make_shared<nn::GNMT>(nn::GNMTOptions(S, V).with_num_layers(c.layers).with_hidden_size(c.hidden)
                                        .with_embed_dim(c.dim).with_dropout(dropout).with_residual(c.residual)
                                        .with_score(nn::parse_score(c.attention)).with_max_source_len(c.max_len)));
  } else if (c.model == "transformer") {
    keep(std::make_shared<nn::Transformer>(nn::TransformerOptions(S, V).with_d_model(c.dim).with_nhead(c.heads)
                                                         .with_num_layers(c.layers).with_dim_feedforward(c.ffn)
                                                         .with_dropout(dropout).with_max_len(c.max_len + 2)));
  } else {
    check(false, "seqgrad: --model expects one of rnn, gru, lstm, gru-attn, lstm-attn, gnmt, transformer, got '", c.model, "'");
  }
}

const nn::Module& Translator::module() const { return *module_; }
nn::Module& Translator::module() { return *module_; }

std::vector<std::string> tokenize_side(const std::string& text, const std::string& kind, const data::Bpe& bpe) {
  if (kind == "bpe") return bpe.encode(text);
  return data::tokenize(text, kind == "char" ? data::Tokenization::Char : data::Tokenization::Space);
}
std::string detokenize_side(const std::vector<std::string>& tokens, const std::string& kind) {
  if (kind == "bpe") return data::Bpe::decode(tokens);  // "▁bil" "ly" "▁ate" -> "billy ate"
  return data::detokenize(tokens, kind == "char" ? data::Tokenization::Char : data::Tokenization::Space);
}

std::vector<std::string> Translator::source_tokens(const std::string& text) const {
  return tokenize_side(text, config.src_tokens, src_bpe);
}
std::vector<std::string> Translator::target_tokens(const std::string& text) const {
  return tokenize_side(text, config.tgt_tokens, tgt_bpe);
}
std::string Translator::target_text(const std::vector<int64_t>& ids) const {
  return detokenize_side(tgt_vocab.decode(ids), config.tgt_tokens);
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
  if (config.hard_attention)  // where it looks is trained by REINFORCE (nn/attention_seq2seq.h)
    return nn::attention_training_loss(static_cast<nn::AttentionSeq2Seq&>(module()), b.src, b.src_lengths, b.tgt_in,
                                       b.tgt_out, opt, reinforce_baseline);
  const Variable logits = model_->logits(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths);  // (B, T, V)
  return nn::cross_entropy(logits, b.tgt_out, opt);
}

void Translator::prepare_source(std::vector<int64_t>& ids) const {
  if (config.reverse_source) std::reverse(ids.begin(), ids.end());
}

std::string Translator::hard_sampler_state() const {
  return static_cast<const nn::AttentionSeq2Seq&>(module()).sampler.state();
}
void Translator::set_hard_sampler_state(const std::string& state) {
  static_cast<nn::AttentionSeq2Seq&>(module()).sampler.set_state(state);
}

std::vector<std::vector<int64_t>> Translator::translate_ids(const std::vector<std::vector<int64_t>>& sources, int64_t beam,
                                                             std::vector<double>* log_probs, int64_t batch) {
  check(beam >= 1, "seqgrad translate: expected a beam size >= 1, got ", beam);
  check(batch >= 1, "seqgrad translate: expected a batch of >= 1 sentences, got ", batch);
  module().eval();
  // Each source as the encoder reads it: an empty line still gets a (short) translation, a long
  // one is cut to max_len, and --reverse-source turns it round.
  std::vector<std::vector<int64_t>> prepared = sources;
  for (auto& s : prepared) {
    if (s.empty()) s.push_back(data::Vocab::kUnk);
    if (static_cast<int64_t>(s.size()) > config.max_len) s.resize(config.max_len);
    prepare_source(s);
  }
  // Batches of sentences of similar length waste little work on padding: decode in order of
  // length (ties in input order), `batch` sentences at a time, and put each result back in its
  // input position. A sentence's result does not depend on the others in its batch (the
  // padding is masked, and every kernel sums in an order that depends on its own row alone), so
  // this is the same, bit for bit, as decoding one sentence at a time.
  std::vector<size_t> order(prepared.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prepared[a].size() < prepared[b].size(); });
  std::vector<std::vector<int64_t>> out(prepared.size());
  if (log_probs) log_probs->assign(prepared.size(), 0);
  const auto opt = nn::DecodeOptions().with_max_len(config.max_len).with_beam_size(beam);
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(batch)) {
    const size_t end = std::min(order.size(), start + static_cast<size_t>(batch));
    std::vector<std::vector<int64_t>> chunk;
    std::vector<int64_t> lengths;
    for (size_t i = start; i < end; ++i) {
      chunk.push_back(prepared[order[i]]);
      lengths.push_back(static_cast<int64_t>(chunk.back().size()));
    }
    const nn::DecodeResult r = nn::decode(*model_, data::pad_sequences(chunk), lengths, opt);  // src (B, S)
    for (size_t i = start; i < end; ++i) {
      out[order[i]] = r.tokens[i - start];
      if (log_probs) (*log_probs)[order[i]] = r.log_probs[i - start];
    }
  }
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

Tensor Translator::alignment(const std::string& sentence, std::vector<std::string>& src_tokens,
                             std::vector<std::string>& out_tokens) {
  module().eval();
  src_tokens = source_tokens(sentence);
  check(!src_tokens.empty(), "seqgrad attention: the sentence is empty");
  if (static_cast<int64_t>(src_tokens.size()) > config.max_len) src_tokens.resize(config.max_len);
  const std::vector<int64_t> ids = src_vocab.encode(src_tokens);
  const Tensor src = data::pad_sequences({ids});
  const std::vector<int64_t> lengths{static_cast<int64_t>(ids.size())};
  const nn::DecodeResult d =
      nn::greedy_decode(*model_, src, lengths, nn::DecodeOptions().with_max_len(config.max_len).with_need_weights(true));
  check(!d.cross_attention.empty(), "seqgrad attention: model '", config.model,
        "' has no attention (try gru-attn, lstm-attn, gnmt or transformer)");
  const Tensor weights = mean(d.cross_attention[0].back(), 0);  // the last layer, averaged over heads: (T_out, S)
  // One label per row of weights, one row per step: special tokens the model emitted (an
  // untrained model may emit <pad> or <bos>) keep their rows and their names.
  out_tokens = tgt_vocab.decode(d.tokens[0], /*strip_special=*/false);
  if (weights.size(0) > static_cast<int64_t>(out_tokens.size())) out_tokens.push_back("<eos>");
  return weights;
}

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
  auto merges = [](const data::Bpe& bpe) {
    io::Json list = io::Json::array();
    for (const std::string& m : bpe.merges()) list.push_back(m);
    return list.dump();
  };
  if (config.src_tokens == "bpe") meta["seqgrad.src_bpe"] = merges(src_bpe);
  if (config.tgt_tokens == "bpe") meta["seqgrad.tgt_bpe"] = merges(tgt_bpe);
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
  // A side's vocabulary: duplicates and missing special tokens are refused by from_tokens.
  auto vocab = [&](const char* key) {
    return from_strings(key, [](const std::vector<std::string>& tokens) { return data::Vocab::from_tokens(tokens); });
  };
  // A bpe side's merges ("e s", "es t", ...), checked line by line; none for the other kinds.
  auto bpe = [&](const std::string& kind, const char* key) {
    if (kind != "bpe") return data::Bpe();
    return from_strings(key, [](const std::vector<std::string>& merges) { return data::Bpe(merges); });
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
    t = std::make_unique<Translator>(config, vocab("seqgrad.src_vocab"), vocab("seqgrad.tgt_vocab"),
                                     bpe(config.src_tokens, "seqgrad.src_bpe"), bpe(config.tgt_tokens, "seqgrad.tgt_bpe"));
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
  // Scored on the target's tokens, but on words for a bpe target: a wrong word then counts
  // once, however many pieces it has (as BLEU is reported after BPE is undone).
  auto tokens = [&t](const std::string& text) {
    return t.config.tgt_tokens == "bpe" ? data::split_whitespace(text) : t.target_tokens(text);
  };
  std::vector<std::string> sources;
  std::vector<data::Tokens> refs, hyps;
  for (const data::Pair& p : pairs) {
    sources.push_back(p.source);
    refs.push_back(tokens(p.target));
  }
  for (const std::string& h : t.translate(sources, beam, nullptr, batch)) hyps.push_back(tokens(h));
  return {data::exact_match(hyps, refs), data::token_error_rate(hyps, refs), data::bleu(hyps, refs)};
}

}  // namespace seqgrad::cli
