// nn/decoding/encoder_decoder.h - the one interface every sequence-to-sequence model decodes through.
//
// Decoding a model means: encode the source once; then, one token at a time, step from a
// decoder state and the previous token to the log-probabilities of the next token. Beam search
// also needs to reorder the states (row i now continues row index[i]). Seq2Seq (nn/recurrent/seq2seq.h),
// AttentionSeq2Seq (nn/attention/attention_seq2seq.h), GNMT (nn/attention/gnmt.h), Transformer (nn/transformer/transformer.h) and
// ImageToText (nn/vision/image_to_text.h, whose source is a batch of images) implement this, so greedy
// decoding, beam search and sampling (decoding.h) are written once, for all of them.
// Training runs the whole target at once (teacher forcing, `logits`), which is much faster than
// stepping; a model's training loss is its own (`training_loss`): cross-entropy over the
// logits, unless the model trains something more, as hard attention's REINFORCE term.
// Read next: decoding.h.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/variable.h"
#include "io/json.h"
#include "nn/core/loss.h"
#include "nn/core/module.h"

namespace seqgrad::nn {

// Everything a model needs to go on decoding N rows (N = B sources, or B * K beams): its
// memory of the source, its recurrent state or key/value cache, and, when asked for, where
// each row has looked in the source so far.
class DecoderState {
 public:
  virtual ~DecoderState() = default;

  // Row i continues the decoding of row index[i] (index (N') of row numbers: rows may repeat,
  // as when beam search copies each source K times, or be dropped).
  void reorder(const Tensor& index);

  // Appends one step's attention, per layer (N, NH, 1, S) (models with attention, when the
  // state was started with need_weights).
  void record_attention(const std::vector<Tensor>& step);
  // Per layer, (N, NH, t, S): the attention of every step so far. A recurrent decoder has one
  // layer and one head. Empty for a model without attention or when not asked.
  std::vector<Tensor> attention;

 protected:
  // The model's own tensors, row by row (the attention is reordered by reorder()).
  virtual void reorder_rows(const Tensor& index) = 0;
};

struct StartOptions {
  bool need_weights = false;  // record the attention of every step
  bool use_cache = true;      // Transformer: keys and values of earlier steps are kept, not recomputed
};

class EncoderDecoder {
 public:
  virtual ~EncoderDecoder() = default;

  // Teacher forcing: src (B, S) ids, tgt_in (B, T) = <bos> y1 .. -> logits (B, T, V).
  // src_lengths / tgt_lengths (B): the real length of each row (empty: all of them). A model
  // may read another kind of source: ImageToText's is a batch of images (B, C, H, W).
  virtual Variable logits(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                          const std::vector<int64_t>& tgt_lengths) = 0;

  // Encodes the source once: the state of B rows before the first step.
  virtual std::unique_ptr<DecoderState> start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                              const StartOptions& options) = 0;
  // tokens (N) the previous token of each row -> (N, V) log P(next token | prefix, source).
  // The state moves on by one step. Call without recording a graph (decoding.h does).
  virtual Tensor step(DecoderState& state, const Tensor& tokens) = 0;

  // The model as a Module (decoding switches it to eval() while it runs).
  virtual Module& module() = 0;

  // Does the output depend on a source? A language model (nn/transformer/language_model.h) models
  // the target alone, and reads its "source" as a prompt to continue: there is nothing to
  // translate, and no translation to score.
  virtual bool reads_source() const { return true; }

  // The width of the vectors the model works in: the Transformer's d_model, a recurrent
  // model's embedding size. The Noam schedule scales its rate by width^-0.5 (nn/optim/schedule.h).
  // 0: the model does not say.
  virtual int64_t width() const { return 0; }

  // The loss to minimise on a batch: tgt_out (B, T) the tokens to predict after tgt_in
  // (<pad> where options.ignore_index says). By default the cross-entropy of logits(); a model
  // whose training needs more (hard attention: REINFORCE for where it looks) overrides it.
  virtual Variable training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                                 const std::vector<int64_t>& tgt_lengths, const Tensor& tgt_out,
                                 const CrossEntropyOptions& options) {
    return cross_entropy(logits(src, src_lengths, tgt_in, tgt_lengths), tgt_out, options);  // logits (B, T, V)
  }
  // What training needs, besides the parameters and buffers, to go on exactly where it
  // stopped (hard attention: its sampler's random state and REINFORCE's running baseline), as
  // JSON for a resume file; null when there is nothing. set_training_state takes it back.
  virtual io::Json training_state() const { return io::Json(); }
  virtual void set_training_state(const io::Json&) {}
};

}  // namespace seqgrad::nn
