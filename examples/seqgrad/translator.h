// examples/seqgrad/translator.h - one interface over every sequence model the tool trains.
//
// A Translator owns a model (plain seq2seq, attention seq2seq, GNMT or Transformer), its two
// vocabularies and its configuration, and can compute a training loss, translate text, return
// an alignment for a heatmap, and save itself as a safetensors checkpoint whose metadata holds
// the configuration, both vocabularies and the merges of a bpe side, so the checkpoint alone is
// enough to translate.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/bpe.h"
#include "data/tasks.h"
#include "data/tokenizer.h"
#include "data/vocab.h"
#include "io/json.h"
#include "nn/attention_seq2seq.h"
#include "nn/gnmt.h"
#include "nn/seq2seq.h"
#include "nn/transformer.h"

namespace seqgrad::cli {

// The names and ranges seqgrad train accepts, and a checkpoint's configuration must keep to.
inline const std::vector<std::string> kModelNames{"rnn", "gru", "lstm", "gru-attn", "lstm-attn", "gnmt", "transformer"};
inline const std::vector<std::string> kScoreNames{"dot", "general", "concat", "additive",
                                                  "scaled-dot", "cosine", "mlp", "location"};
inline const std::vector<std::string> kTokenizerNames{"space", "char", "bpe"};
inline const std::vector<std::string> kDecoderNames{"luong", "bahdanau"};
inline const std::vector<std::string> kWindowNames{"global", "local-p", "local-m"};
inline const std::vector<std::string> kContextNames{"last", "mean", "max"};
constexpr int64_t kMaxLayers = 12, kMaxWidth = 4096, kMaxHeads = 64, kMaxFeedForward = 16384, kMaxDecode = 4096;
constexpr double kMaxDropout = 0.9;
// Sentences decoded at once by translate and eval (--batch): 64 rows (256 with beam 4) keep
// the matrix products large enough to run at speed, in a few MB.
// At most kMaxTranslateBatch: a batch is padded to its longest sentence, so memory grows with it.
constexpr int64_t kTranslateBatch = 64, kMaxTranslateBatch = 4096;
// A resume file (resume.h) holds the model's tensors under their own names and the optimizer's
// buffers under this prefix, with its training state in the metadata entry kTrainStateKey.
constexpr const char* kOptimizerPrefix = "optimizer.";
constexpr const char* kTrainStateKey = "seqgrad.train_state";

// Everything needed to rebuild a model before loading its weights.
struct ModelConfig {
  std::string model = "transformer";  // rnn | gru | lstm | gru-attn | lstm-attn | gnmt | transformer
  std::string attention = "general";  // score function of the -attn models
  std::string decoder = "luong";      // the -attn models' decoder: luong | bahdanau
  std::string window = "global";      // which positions it scores: global | local-p | local-m
  int64_t window_size = 3;            // D of the local windows: 2D + 1 positions
  std::string context = "last";       // plain seq2seq: the encoder's states -> its context vector
  int64_t layers = 2, hidden = 128, dim = 64, heads = 4, ffn = 256, max_len = 64;
  double dropout = 0.1;
  bool bidirectional = false;
  bool hard_attention = false;  // -attn models: read one sampled position per step (REINFORCE)
  bool reverse_source = false;  // plain seq2seq: the encoder reads the source backwards
  bool residual = true;         // gnmt: residual connections from layer 3 on
  std::string src_tokens = "space", tgt_tokens = "space";  // space | char | bpe

  io::Json to_json() const;
  // Checks every field against the range seqgrad train accepts, naming the field.
  static ModelConfig from_json(const io::Json& j);
};

// The first field in which two configurations differ, as "layers is 5 in the flags and 1 in the
// model" (a_name = "the flags", b_name = "the model"), or "" when they are the same.
std::string first_difference(const ModelConfig& a, const ModelConfig& b, const char* a_name, const char* b_name);

// One side's text as tokens, and tokens back as text, for each --src-tokens/--tgt-tokens kind:
// space (words), char (UTF-8 characters) or bpe (pieces by that side's merges, data/bpe.h).
std::vector<std::string> tokenize_side(const std::string& text, const std::string& kind, const data::Bpe& bpe);
std::string detokenize_side(const std::vector<std::string>& tokens, const std::string& kind);

class Translator {
 public:
  // The merges are those of the bpe sides (none for the others).
  Translator(const ModelConfig& config, data::Vocab src_vocab, data::Vocab tgt_vocab, data::Bpe src_bpe = {},
             data::Bpe tgt_bpe = {});

  nn::Module& module();
  const nn::Module& module() const;
  // Mean cross-entropy over the batch's real target tokens. With hard attention, in training
  // mode, plus the REINFORCE surrogate that trains where it looks (nn::reinforce_loss).
  Variable loss(const data::Batch& batch, real label_smoothing);
  // --reverse-source: the source ids as the encoder reads them (reversed, or as they are).
  void prepare_source(std::vector<int64_t>& ids) const;
  // Greedy (beam = 1) or beam search, for every model kind; ids without <bos>/<eos>. With
  // log_probs, also each output's log P(output + <eos> | source) under the model. The sources
  // are decoded `batch` at a time, shortest first, and returned in input order; the results are
  // the same, bit for bit, for any batch size and thread count.
  std::vector<std::vector<int64_t>> translate_ids(const std::vector<std::vector<int64_t>>& sources, int64_t beam,
                                                  std::vector<double>* log_probs = nullptr,
                                                  int64_t batch = kTranslateBatch);
  // Text in, text out (and the log-probabilities, as translate_ids).
  std::vector<std::string> translate(const std::vector<std::string>& sentences, int64_t beam,
                                     std::vector<double>* log_probs = nullptr, int64_t batch = kTranslateBatch);
  // The alignment of one translation: (output tokens [+ <eos>], source tokens) weights, with the
  // tokens themselves. Throws for models without attention.
  Tensor alignment(const std::string& sentence, std::vector<std::string>& source_tokens,
                   std::vector<std::string>& output_tokens);

  std::vector<std::string> source_tokens(const std::string& text) const;
  std::vector<std::string> target_tokens(const std::string& text) const;
  std::string target_text(const std::vector<int64_t>& ids) const;
  // Sentence pairs as ids, tokenised as this model's sides are.
  data::EncodedPairs encode_pairs(const std::vector<data::Pair>& pairs) const;

  // What makes a checkpoint self-contained: the format, the configuration, both vocabularies
  // and the merges of a bpe side ("seqgrad.src_bpe": ["e s", "es t", ...]).
  std::map<std::string, std::string> metadata() const;
  void save(const std::string& path) const;
  // Reads a checkpoint written by save() (or a resumable one written by seqgrad train, whose
  // extra optimizer entries are skipped).
  static std::unique_ptr<Translator> load(const std::string& path);

  ModelConfig config;
  data::Vocab src_vocab, tgt_vocab;
  data::Bpe src_bpe, tgt_bpe;
  // Hard attention's training state, saved in resume files so a resumed run samples the same
  // positions: the sampler's random state, and REINFORCE's running baseline (-1: none yet).
  std::string hard_sampler_state() const;
  void set_hard_sampler_state(const std::string& state);
  real reinforce_baseline = -1;

 private:
  // The model, whichever kind: everything after construction goes through the decoding
  // interface (nn/encoder_decoder.h), with no switch over kinds.
  std::shared_ptr<nn::Module> module_;
  nn::EncoderDecoder* model_ = nullptr;
};

// How well a model translates `pairs` (greedy, or beam search with beam > 1; `batch` sentences
// at a time): exact match, token error rate and BLEU (over words when the target is bpe), as
// `seqgrad eval` prints them.
struct Scores {
  double exact = 0, ter = 0, bleu = 0;
};
Scores score(Translator& t, const std::vector<data::Pair>& pairs, int64_t beam, int64_t batch = kTranslateBatch);

}  // namespace seqgrad::cli
