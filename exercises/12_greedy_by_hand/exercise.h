// exercises/12_greedy_by_hand - prediction one token at a time (chapter 10).
//
// Training sees the whole target at once; prediction cannot. Write greedy decoding for a
// trained nn::Transformer from its three stages, WITHOUT the key/value cache, and with a
// minimum length, which the library's decoders do not have (a model that learned to stop
// too early can be made to say at least min_len tokens):
//   memory = model.encode(src, src_lengths)
//   prefix = <bos>  (data::Vocab::kBos), one row per source
//   repeat up to max_len times:
//     logits = model.decode(prefix, memory).logits         (B, t, V): every prefix position
//     next   = argmax of the LAST position's logits         (B)
//              excluding <eos> (data::Vocab::kEos) while the sequence has < min_len tokens
//     a sequence that produces <eos> is finished: keep its tokens so far
//     append next to the prefix; stop early once every sequence has finished
// Return each sequence's tokens without <bos> and <eos>. Decoding must not train: no graph
// (NoGradGuard) and no dropout (model.eval(), restoring the previous mode afterwards).
// With min_len = 0, nn::greedy_decode (nn/decoding/decoding.cpp, shown in chapter 10) gives the same
// tokens: the check compares. With min_len > 0 it checks each token against the model's
// logits for your output, teacher-forced (chapter 10: one decoder run sees every position).
#pragma once

#include <cstdint>
#include <vector>

#include "data/vocab.h"
#include "nn/decoding/decoding.h"
#include "nn/transformer/transformer.h"
#include "seqgrad.h"

std::vector<std::vector<int64_t>> my_greedy_decode(seqgrad::nn::Transformer& model, const seqgrad::Tensor& src,
                                                   const std::vector<int64_t>& src_lengths, int64_t max_len,
                                                   int64_t min_len = 0);
