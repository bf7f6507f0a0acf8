// nn/encoder_decoder.h - the one interface every sequence-to-sequence model decodes through.
//
// Decoding a model means: encode the source once; then, one token at a time, step from a
// decoder state and the previous token to the log-probabilities of the next token. Beam search
// also needs to reorder the states (row i now continues row index[i]). Seq2Seq (seq2seq.h),
// AttentionSeq2Seq (attention_seq2seq.h), GNMT (gnmt.h), Transformer (transformer.h) and
// ImageToText (image_to_text.h, whose source is a batch of images) implement this, so greedy
// decoding, beam search and sampling (decoding.h) are written once, for all of them.
// What this is not: training. Teacher forcing runs the whole target at once (`logits`), which
// is much faster than stepping. Read next: decoding.h.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/variable.h"
#include "nn/module.h"

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
};

}  // namespace seqgrad::nn
