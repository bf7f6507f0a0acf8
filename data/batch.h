// data/batch.h - from text pairs to padded id tensors, in batches of similar length.
//
// A Batch holds the source ids (B, S) and the target twice, shifted by one for teacher
// forcing: the decoder reads tgt_in = <bos> y1 .. yn and learns to predict tgt_out =
// y1 .. yn <eos>. Shorter sequences are padded with <pad> (id 0) on the right, and their true
// lengths travel with the batch so recurrent layers and losses can ignore the padding.
// Depends on tensor/ only.
#pragma once

#include <cstdint>
#include <vector>

#include "data/tasks.h"
#include "data/vocab.h"
#include "tensor/tensor.h"

namespace seqgrad::data {

// Id sequences -> (B, max length), padded with `pad` on the right.
Tensor pad_sequences(const std::vector<std::vector<int64_t>>& sequences, int64_t pad = Vocab::kPad);

struct Batch {
  Tensor src;      // (B, S)
  Tensor tgt_in;   // (B, T): <bos> y1 .. yn, padded
  Tensor tgt_out;  // (B, T): y1 .. yn <eos>, padded
  std::vector<int64_t> src_lengths, tgt_lengths;  // tgt_lengths count the <eos>
  int64_t size() const { return src.size(0); }
};

// The target side alone, for a source that is not a token sequence (an image): plain ids ->
// tgt_in <bos> y and tgt_out y <eos>, each (B, T) padded, and the lengths (counting <eos>).
//   teacher_forcing({{9, 10}}).tgt_in == [[1, 9, 10]], .tgt_out == [[9, 10, 2]]
struct TeacherForcing {
  Tensor tgt_in, tgt_out;            // (B, T)
  std::vector<int64_t> tgt_lengths;
};
TeacherForcing teacher_forcing(const std::vector<std::vector<int64_t>>& tgt);

// src and tgt hold plain token ids (no <bos>/<eos>); empty sources are not allowed.
Batch make_batch(const std::vector<std::vector<int64_t>>& src, const std::vector<std::vector<int64_t>>& tgt);

// A whole corpus as ids, with the vocabularies that encode it.
struct EncodedPairs {
  std::vector<std::vector<int64_t>> src, tgt;
  size_t size() const { return src.size(); }
  // The examples with these indices, as a Batch.
  Batch batch(const std::vector<size_t>& indices) const;
};
EncodedPairs encode_pairs(const std::vector<Pair>& pairs, const Vocab& src_vocab, Tokenization src_tok,
                          const Vocab& tgt_vocab, Tokenization tgt_tok);

// Groups example indices into batches of up to batch_size. Shuffled with `seed`; with
// `bucket`, examples of similar source length share a batch (sorted within windows of 50
// batches), so little compute is spent on padding. Batch order is shuffled too.
std::vector<std::vector<size_t>> make_batches(const std::vector<int64_t>& lengths, int64_t batch_size, uint64_t seed,
                                              bool bucket = true);

// Batches by tokens, as fairseq's --max-tokens: a pair's size is its longer side in positions,
// max(source, target + 1) (the target side carries <bos> or <eos>), and a batch holds pairs of
// similar size up to max_tokens >= pairs x largest size (and at most max_pairs pairs; 0: no
// limit). The pairs are shuffled with `seed`, then sorted by size (ties stay shuffled), cut
// into batches in that order, and the batch order shuffled: short sentences travel in big
// batches, long ones in small. The sorted sizes, so the number of batches, are the same for
// every seed. A pair larger than max_tokens is an error naming both.
std::vector<std::vector<size_t>> make_token_batches(const std::vector<int64_t>& src_lengths,
                                                    const std::vector<int64_t>& tgt_lengths, int64_t max_tokens,
                                                    int64_t max_pairs, uint64_t seed);

// The share of a batching's positions that are padding, source and target together:
// 1 - (real positions) / (sum over batches of pairs x longest), with target + 1 as above.
double padding_share(const std::vector<std::vector<size_t>>& batches, const std::vector<int64_t>& src_lengths,
                     const std::vector<int64_t>& tgt_lengths);

}  // namespace seqgrad::data
