// examples/seqgrad/translator.h - one interface over every sequence model the tool trains.
//
// A Translator owns a model (any kind nn/decoding/model_kind.h can build by name), its two
// vocabularies and its configuration, and can compute a training loss, translate text, return
// an alignment for a heatmap, and save itself as a safetensors checkpoint whose metadata holds
// the configuration, both vocabularies and what each side's tokenizer learned (a bpe side's
// merges), so the checkpoint alone is enough to translate.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/tasks.h"
#include "data/tokenizer.h"
#include "data/vocab.h"
#include "io/json.h"
#include "nn/decoding/decoding.h"
#include "nn/decoding/encoder_decoder.h"
#include "nn/decoding/model_kind.h"

namespace seqgrad::cli {

// Limits a checkpoint's configuration must keep to. (Model kinds, scores, cells and their
// options come from nn/'s registries, nn/decoding/model_kind.h; tokenizers from data/tokenizer.h.)
constexpr int64_t kMaxDecode = 4096;
// Sentences decoded at once by translate and eval (--batch): 64 rows (256 with beam 4) keep
// the matrix products large enough to run at speed, in a few MB.
// At most kMaxTranslateBatch: a batch is padded to its longest sentence, so memory grows with it.
constexpr int64_t kTranslateBatch = 64, kMaxTranslateBatch = 4096;
// A resume file (resume.h) holds the model's tensors under their own names and the optimizer's
// buffers under this prefix, with its training state in the metadata entry kTrainStateKey.
constexpr const char* kOptimizerPrefix = "optimizer.";
constexpr const char* kTrainStateKey = "seqgrad.train_state";

// Everything needed to rebuild a model before loading its weights: the model kind, its
// options (those it takes, nn/decoding/model_kind.h), the longest sequence and each side's tokenizer.
// As JSON, one object: {"model": "lstm-attn", "layers": 2, ..., "max_len": 64, "src_tokens": ...}.
struct ModelConfig {
  std::string model = "transformer";  // a name nn::model_names() lists
  nn::Settings options;               // by key; resolved() fills in the defaults
  int64_t max_len = 64;
  std::string src_tokens = "space", tgt_tokens = "space";  // each a name data::tokenizers() lists

  ModelConfig& set(const std::string& key, io::Json value) {
    options.set(key, std::move(value));
    return *this;
  }
  // The options the model kind takes, each set (as given, or its default) and checked, the
  // others dropped. Throws naming the option by key.
  ModelConfig resolved() const;
  io::Json to_json() const;
  // Checks every field against what seqgrad train accepts, naming the field. Keys of options
  // the model does not take are ignored (older checkpoints recorded every flag).
  static ModelConfig from_json(const io::Json& j);
};

// The first field in which two configurations differ, as "layers is 5 in the flags and 1 in the
// model" (a_name = "the flags", b_name = "the model"), or "" when they are the same.
std::string first_difference(const ModelConfig& a, const ModelConfig& b, const char* a_name, const char* b_name);

// One translation and what it attended to (Translator::attention; drawn by pictures.h).
struct AttentionView {
  std::string sentence, translation;
  std::vector<std::string> source;  // the source tokens the model read (S)
  std::vector<std::string> output;  // a label per step: the output tokens [+ <eos>] (T_out)
  std::vector<Tensor> layers;       // per decoder layer, (NH, T_out, S); a recurrent decoder has one, NH = 1
  int64_t beam = 1;
  std::vector<nn::SearchNode> search;  // beam > 1: every prefix the search kept (nn/decoding/decoding.h)
  // The mean over heads of the last layer: the one map `seqgrad attention --svg` draws. (T_out, S)
  Tensor mean_of_last_layer() const;
};

// The seed of sample number `stream` of a run seeded `seed` (--sample in translate, each line of
// its input; seqgrad sample, each sample): a generator of its own per stream, so a sample does
// not depend on how many came before it, nor on the batch it was decoded in.
inline uint64_t sample_stream_seed(uint64_t seed, uint64_t stream) { return seed * 1000003ull + stream; }

// How translate decodes: the flags of seqgrad translate and eval. Beam search (beam > 1) ranks
// its hypotheses by log P / ((5 + |Y|) / 6)^length_penalty (nn/decoding/decoding.h); sampling
// draws each token from softmax(logits / temperature), restricted to the top_k most likely
// (0: all), sentence i from a generator seeded by (seed, streams[i]) (streams empty: i), so what
// it draws for a sentence depends neither on the batch nor on the sentences around it.
struct TranslateOptions {
  int64_t beam = 1;
  int64_t batch = kTranslateBatch;
  real length_penalty = real(0.6);
  int64_t nbest = 1;  // hypotheses per sentence, best first (beam search; at most beam)
  bool sample = false;
  real temperature = 1;
  int64_t top_k = 0;
  uint64_t seed = 0;
  std::vector<uint64_t> streams;  // --sample: each sentence's own stream (translate: its line number)
};

// One translation of a sentence: the output ids, log P(output [+ <eos>] | source), and the
// score beam search ranked it by (the log-probability itself for greedy decoding and sampling).
struct Candidate {
  std::vector<int64_t> ids;
  double log_prob = 0, score = 0;
};

class Translator {
 public:
  // Each side is cut by its tokenizer (what it learned included: a bpe side's merges); null: a
  // new one of the kind the configuration names, which has learned nothing.
  Translator(const ModelConfig& config, data::Vocab src_vocab, data::Vocab tgt_vocab,
             std::shared_ptr<data::Tokenizer> src_tokenizer = nullptr,
             std::shared_ptr<data::Tokenizer> tgt_tokenizer = nullptr);

  nn::Module& module();
  const nn::Module& module() const;
  // The model's own training loss on a batch (nn/decoding/encoder_decoder.h): the mean cross-entropy
  // over the real target tokens, plus whatever else the model trains (hard attention's
  // REINFORCE term).
  Variable loss(const data::Batch& batch, real label_smoothing);
  // Greedy (beam = 1) or beam search, for every model kind; ids without <bos>/<eos>. With
  // log_probs, also each output's log P(output + <eos> | source) under the model. The sources
  // are decoded `batch` at a time, shortest first, and returned in input order; the results are
  // the same, bit for bit, for any batch size and thread count.
  std::vector<std::vector<int64_t>> translate_ids(const std::vector<std::vector<int64_t>>& sources, int64_t beam,
                                                  std::vector<double>* log_probs = nullptr,
                                                  int64_t batch = kTranslateBatch);
  // Every way of decoding: per source, options.nbest candidates (one unless beam search is asked
  // for more), best first. Sources are cut to max_len tokens; an empty one reads as <unk>.
  std::vector<std::vector<Candidate>> candidates(const std::vector<std::vector<int64_t>>& sources,
                                                 const TranslateOptions& options);
  // Text in, text out: the best candidate of each.
  std::vector<std::string> translate(const std::vector<std::string>& sentences, const TranslateOptions& options);
  // Text in, text out (and the log-probabilities, as translate_ids).
  std::vector<std::string> translate(const std::vector<std::string>& sentences, int64_t beam,
                                     std::vector<double>* log_probs = nullptr, int64_t batch = kTranslateBatch);
  // What the model looked at while translating one sentence (greedy, or beam search with
  // beam > 1): every decoder layer's and head's weights over the source, and with beam search
  // the whole search. Throws for models without attention.
  AttentionView attention(const std::string& sentence, int64_t beam = 1);

  // A source as the model reads it: its first max_len tokens.
  std::vector<std::string> source_tokens(const std::string& text) const;
  // Does the source have more than max_len tokens (so that the model reads only the first max_len)?
  bool source_is_cut(const std::string& text) const;
  std::vector<std::string> target_tokens(const std::string& text) const;
  std::string target_text(const std::vector<int64_t>& ids) const;
  // Sentence pairs as ids, tokenised as this model's sides are.
  data::EncodedPairs encode_pairs(const std::vector<data::Pair>& pairs) const;

  // What makes a checkpoint self-contained: the format, the configuration, both vocabularies
  // and what a side's tokenizer learned, under its name ("seqgrad.src_bpe": ["e s", "es t", ...]).
  std::map<std::string, std::string> metadata() const;
  void save(const std::string& path) const;
  // Reads a checkpoint written by save() (or a resumable one written by seqgrad train, whose
  // extra optimizer entries are skipped).
  static std::unique_ptr<Translator> load(const std::string& path);

  ModelConfig config;
  data::Vocab src_vocab, tgt_vocab;
  std::shared_ptr<data::Tokenizer> src_tokenizer, tgt_tokenizer;
  // What the model's training needs besides its tensors (nn::EncoderDecoder::training_state):
  // saved in resume files, so a resumed run goes on exactly.
  nn::EncoderDecoder& model() { return *model_; }
  const nn::EncoderDecoder& model() const { return *model_; }

 private:
  // The model, whichever kind: everything after construction goes through the decoding
  // interface (nn/decoding/encoder_decoder.h), with no switch over kinds.
  std::shared_ptr<nn::EncoderDecoder> model_;
  nn::Module* module_ = nullptr;  // the same model, as a Module
};

// How well a model translates `pairs` (greedy, or beam search with beam > 1; `batch` sentences
// at a time): exact match, edits per token and BLEU (over words when the target's tokens are
// pieces of words, as bpe's are), as `seqgrad eval` prints them.
struct Scores {
  double exact = 0, edits_per_token = 0, bleu = 0;
};
Scores score(Translator& t, const std::vector<data::Pair>& pairs, const TranslateOptions& options);
// The model's loss on `pairs` (no label smoothing, no gradient): the mean of the losses of
// batches of 64 pairs of similar length, each the mean over its target tokens. What
// seqgrad train prints as valid_loss, and seqgrad eval as a language model's loss.
double mean_loss(Translator& t, const data::EncodedPairs& pairs);
Scores score(Translator& t, const std::vector<data::Pair>& pairs, int64_t beam, int64_t batch = kTranslateBatch);

}  // namespace seqgrad::cli
