// nn/decoding/decoding.h - turning any trained sequence model into output sequences: greedy decoding,
// beam search and sampling.
//
// Every function works through the EncoderDecoder interface (encoder_decoder.h), so the same
// code decodes Seq2Seq, the attention decoders and the Transformer (which keeps its key/value
// cache: a step projects only the newest token). All start every output with <bos>, step one
// token at a time, and stop a sequence at <eos> or after max_len tokens; none records a graph,
// and the model is in eval() mode while they run. Beam search keeps the K most likely prefixes
// per source and ranks finished outputs by log-probability over GNMT's length penalty
// ((5 + |Y|) / 6)^alpha, as "Attention Is All You Need" did (K = 4, alpha = 0.6); sampling draws
// each token from the softmax at a temperature, optionally from the top k only.
// Read next: examples/06_transformer/main.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/decoding/encoder_decoder.h"
#include "tensor/random.h"

namespace seqgrad::nn {

struct DecodeOptions {
  int64_t max_len = 64;             // tokens per output, <eos> not counted
  int64_t beam_size = 1;            // K (beam_search only)
  real length_penalty = real(0.6);  // alpha (beam_search); 0 ranks by the plain sum of log-probabilities
  real temperature = 1;             // sample: logits / temperature (lower: closer to greedy)
  int64_t top_k = 0;                // sample: draw from the k most likely tokens only (0: all)
  bool use_cache = true;            // Transformer: false re-runs the whole prefix every step (for checking)
  bool need_weights = false;        // keep the encoder-decoder attention of each output
  bool keep_search = false;         // beam_search: keep every prefix it kept (DecodeResult::search)

  DecodeOptions& with_max_len(int64_t v) { max_len = v; return *this; }
  DecodeOptions& with_beam_size(int64_t v) { beam_size = v; return *this; }
  DecodeOptions& with_length_penalty(real v) { length_penalty = v; return *this; }
  DecodeOptions& with_temperature(real v) { temperature = v; return *this; }
  DecodeOptions& with_top_k(int64_t v) { top_k = v; return *this; }
  DecodeOptions& with_use_cache(bool v) { use_cache = v; return *this; }
  DecodeOptions& with_need_weights(bool v) { need_weights = v; return *this; }
  DecodeOptions& with_keep_search(bool v) { keep_search = v; return *this; }
};

// One prefix beam search kept: a live beam after step `step` (0: the first token), or a
// hypothesis it finished then (`finished`, with its length-normalised score; NaN for a live
// beam). tokens are the output ids without <bos>/<eos>; a finished hypothesis that ended in
// <eos> has `eos` set (one cut off at max_len does not).
struct SearchNode {
  int64_t step;
  std::vector<int64_t> tokens;
  double log_prob, score;
  bool finished, eos;
};

struct DecodeResult {
  std::vector<std::vector<int64_t>> tokens;  // per source: the output ids, without <bos>/<eos>
  std::vector<double> log_probs;             // per source: log P(tokens [+ <eos>] | source)
  // With need_weights, per source and per decoder layer, the encoder-decoder attention of the
  // chosen output: (NH, T_b, S_b) where row t is the step that produced output token t (the
  // last row produced <eos>, if any) and S_b is that source's length (without src_lengths,
  // every position: an image's grid cells) (a recurrent attention decoder: one layer, NH = 1).
  // Empty otherwise, and for a model without attention.
  std::vector<std::vector<Tensor>> cross_attention;
  // With keep_search (beam_search only), per source, in the order the search made them: every
  // live beam of every step and every finished hypothesis, the tree a drawing of the search
  // shows (docs/figures/beam-tree.svg). The answer is the finished node with the best score.
  std::vector<std::vector<SearchNode>> search;
};

// Argmax at every step. src: the batch of sources the model reads, (B, S) ids (src_lengths (B),
// empty = all S) or, for ImageToText, images (B, C, H, W) (src_lengths empty).
//   auto out = greedy_decode(model, batch.src, batch.src_lengths, DecodeOptions().with_max_len(40));
DecodeResult greedy_decode(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                           const DecodeOptions& options = DecodeOptions());

// Beam search over a batch of sources, K beams each. Every step extends each of the K live
// prefixes by every token and keeps the 2K most likely extensions: one ending in <eos> among
// the best K is a finished hypothesis, and the first K others are the new beams. The output is
// the finished hypothesis with the best length-normalised score:
//   score(Y) = log P(Y | X) / ((5 + |Y|) / 6)^alpha          (|Y| counts the <eos>)
// A source stops early once K hypotheses have finished and no live prefix can still beat the
// best of them: a prefix's log-probability only falls as it grows, but its penalty grows too,
// so the most a live prefix L can score is L / ((5 + max_len) / 6)^alpha. At max_len the live
// beams count as finished. With K = 1 this is greedy decoding, token for token.
DecodeResult beam_search(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                         const DecodeOptions& options = DecodeOptions());

// Greedy decoding when options.beam_size is 1, beam search otherwise: what a caller that takes
// a --beam flag wants.
DecodeResult decode(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                    const DecodeOptions& options = DecodeOptions());

// Sampling: each token drawn from softmax(logits / temperature), restricted to the top_k most
// likely tokens when top_k > 0, with `generator` (reproducible from its seed). temperature -> 0
// approaches greedy decoding; top_k = 1 is greedy decoding.
DecodeResult sample(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                    const DecodeOptions& options = DecodeOptions(), Generator& generator = default_generator());

}  // namespace seqgrad::nn
