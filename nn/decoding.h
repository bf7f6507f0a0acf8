// nn/decoding.h - turning a trained Transformer into output sequences: greedy and beam search.
//
// Both start every output with <bos>, run the decoder one position at a time, and stop a
// sequence at <eos> or after max_len tokens. With the key/value cache (the default) step t
// projects only the newest token and attends to the cached keys of the t before it; without
// it the whole prefix is run again each step. The two give the same tokens. Beam search keeps
// the K most likely prefixes per source and ranks finished outputs by log-probability over
// GNMT's length penalty ((5 + |Y|) / 6)^alpha, as "Attention Is All You Need" did (K = 4,
// alpha = 0.6).
// What this is not: sampling (temperature, top-k). Read next: examples/06_transformer/main.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/transformer.h"

namespace seqgrad::nn {

struct DecodeOptions {
  int64_t max_len = 64;             // tokens per output, <eos> not counted
  int64_t beam_size = 1;            // K (beam_search only)
  real length_penalty = real(0.6);  // alpha; 0 ranks by the plain sum of log-probabilities
  bool use_cache = true;            // false re-runs the whole prefix every step (for checking)
  bool need_weights = false;        // keep the encoder-decoder attention of each output

  DecodeOptions& with_max_len(int64_t v) { max_len = v; return *this; }
  DecodeOptions& with_beam_size(int64_t v) { beam_size = v; return *this; }
  DecodeOptions& with_length_penalty(real v) { length_penalty = v; return *this; }
  DecodeOptions& with_use_cache(bool v) { use_cache = v; return *this; }
  DecodeOptions& with_need_weights(bool v) { need_weights = v; return *this; }
};

struct DecodeResult {
  std::vector<std::vector<int64_t>> tokens;  // per source: the output ids, without <bos>/<eos>
  std::vector<double> log_probs;             // per source: log P(tokens [+ <eos>] | source)
  // With need_weights, per source and per decoder layer, the encoder-decoder attention of the
  // chosen output: (NH, T_b, S_b) where row t is the step that produced output token t (the
  // last row produced <eos>, if any) and S_b is that source's length. Empty otherwise.
  std::vector<std::vector<Tensor>> cross_attention;
};

// Argmax at every step. src (B, S) ids, src_lengths (B) (empty = all S).
//   auto out = greedy_decode(model, batch.src, batch.src_lengths, DecodeOptions().with_max_len(40));
DecodeResult greedy_decode(Transformer& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                           const DecodeOptions& options = DecodeOptions());

// Beam search over a batch of sources, K beams each. Every step extends each of the K live
// prefixes by every token and keeps the 2K most likely extensions: one ending in <eos> among
// the best K is a finished hypothesis, and the first K others are the new beams. A source is
// done when K hypotheses have finished and all live ones are already less likely than the K-th
// best of them (or at max_len, where the live ones count as finished). Its output is the
// finished hypothesis with the best length-normalised score:
//   score(Y) = log P(Y | X) / ((5 + |Y|) / 6)^alpha          (|Y| counts the <eos>)
// With K = 1 this is greedy decoding, token for token.
DecodeResult beam_search(Transformer& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                         const DecodeOptions& options = DecodeOptions());

}  // namespace seqgrad::nn
