// io/special_tokens.h - the ids of the four special tokens, the same in every vocabulary.
//
// A vocabulary (data/vocab.h) puts <pad>, <bos>, <eos> and <unk> at ids 0..3; a decoder (nn/)
// starts every output with <bos> and stops at <eos>; a checkpoint stores each vocabulary with
// these four first. They are defined here, below both data/ and nn/, so that a model can
// decode without knowing how vocabularies are built. What this is not: the tokens' text
// ("<pad>", ...), which only data/vocab.h needs.
#pragma once

#include <cstdint>

namespace seqgrad {

constexpr int64_t kPadId = 0;  // padding: ignored by the loss, masked out by attention
constexpr int64_t kBosId = 1;  // begin of sequence: the decoder's first input
constexpr int64_t kEosId = 2;  // end of sequence: decoding stops when it is produced
constexpr int64_t kUnkId = 3;  // any token the vocabulary does not hold

}  // namespace seqgrad
