// examples/common/length_accuracy.h - the evaluation examples 04, 05 and 06 share: how often a
// model's whole output is right, per bucket of 5 source lengths, so that the three models of the
// story (plain seq2seq, attention, Transformer) are measured the same way.
//
// Any model decodes through nn/decoding/decoding.h (greedy, or beam search with options.beam_size > 1),
// 100 test sources at a time. `prepare` may change a source before it is read (example 04
// reverses it); the bucket is the original length. Over several seeds the examples print
// data::bucket_table_over_runs under a title ending in over_seeds(...) (examples/common/seeds.h).
// Header-only: examples are one file each.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/metrics.h"
#include "examples/common/seeds.h"
#include "nn/decoding/decoding.h"

namespace seqgrad::examples {

using SourceTransform = std::function<std::vector<int64_t>(const std::vector<int64_t>&)>;

// {first length of a bucket: exact match in it}, buckets from `first_length` in steps of 5.
inline std::map<int64_t, double> exact_match_by_length(nn::EncoderDecoder& model, const data::EncodedPairs& test,
                                                       int64_t first_length, const nn::DecodeOptions& options,
                                                       const SourceTransform& prepare = nullptr) {
  data::LengthBuckets buckets(first_length);
  for (size_t start = 0; start < test.size(); start += 100) {
    std::vector<std::vector<int64_t>> src;
    std::vector<int64_t> lengths;
    for (size_t i = start; i < std::min(test.size(), start + 100); ++i) {
      src.push_back(prepare ? prepare(test.src[i]) : test.src[i]);
      lengths.push_back(static_cast<int64_t>(src.back().size()));
    }
    const Tensor batch = data::pad_sequences(src);
    const nn::DecodeResult out = nn::decode(model, batch, lengths, options);
    for (size_t k = 0; k < src.size(); ++k)
      buckets.add(static_cast<int64_t>(test.src[start + k].size()), out.tokens[k] == test.tgt[start + k]);
  }
  return buckets.accuracy();
}

}  // namespace seqgrad::examples
