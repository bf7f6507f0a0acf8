// data/batch.cpp - padding, teacher-forcing shifts, and length-bucketed batches.
#include "data/batch.h"

#include <algorithm>
#include <numeric>

#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {

Tensor pad_sequences(const std::vector<std::vector<int64_t>>& sequences, int64_t pad) {
  size_t longest = 0;
  for (const auto& s : sequences) longest = std::max(longest, s.size());
  Tensor out = full({static_cast<int64_t>(sequences.size()), static_cast<int64_t>(longest)}, static_cast<real>(pad));
  for (size_t b = 0; b < sequences.size(); ++b)
    for (size_t t = 0; t < sequences[b].size(); ++t)
      out.data()[b * longest + t] = static_cast<real>(sequences[b][t]);
  return out;
}

Batch make_batch(const std::vector<std::vector<int64_t>>& src, const std::vector<std::vector<int64_t>>& tgt) {
  check(!src.empty() && src.size() == tgt.size(), "make_batch: expected as many targets as sources (and at least one), got ",
        src.size(), " and ", tgt.size());
  Batch b;
  std::vector<std::vector<int64_t>> tin, tout;
  for (size_t i = 0; i < src.size(); ++i) {
    check(!src[i].empty(), "make_batch: source ", i, " is empty");
    b.src_lengths.push_back(static_cast<int64_t>(src[i].size()));
    std::vector<int64_t> in{Vocab::kBos}, out = tgt[i];
    in.insert(in.end(), tgt[i].begin(), tgt[i].end());
    out.push_back(Vocab::kEos);
    b.tgt_lengths.push_back(static_cast<int64_t>(out.size()));
    tin.push_back(in);
    tout.push_back(out);
  }
  b.src = pad_sequences(src);
  b.tgt_in = pad_sequences(tin);
  b.tgt_out = pad_sequences(tout);
  return b;
}

Batch EncodedPairs::batch(const std::vector<size_t>& indices) const {
  std::vector<std::vector<int64_t>> s, t;
  for (size_t i : indices) {
    s.push_back(src.at(i));
    t.push_back(tgt.at(i));
  }
  return make_batch(s, t);
}

EncodedPairs encode_pairs(const std::vector<Pair>& pairs, const Vocab& src_vocab, Tokenization src_tok,
                          const Vocab& tgt_vocab, Tokenization tgt_tok) {
  EncodedPairs e;
  for (const Pair& p : pairs) {
    e.src.push_back(src_vocab.encode(tokenize(p.source, src_tok)));
    e.tgt.push_back(tgt_vocab.encode(tokenize(p.target, tgt_tok)));
  }
  return e;
}

std::vector<std::vector<size_t>> make_batches(const std::vector<int64_t>& lengths, int64_t batch_size, uint64_t seed,
                                              bool bucket) {
  check(batch_size >= 1, "make_batches: expected batch_size >= 1, got ", batch_size);
  Generator g(seed);
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[g.randint(i)]);  // Fisher-Yates
  const size_t B = static_cast<size_t>(batch_size);
  if (bucket) {
    const size_t window = 50 * B;
    for (size_t start = 0; start < order.size(); start += window) {
      auto end = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + window));
      std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(start), end,
                       [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
    }
  }
  std::vector<std::vector<size_t>> batches;
  for (size_t start = 0; start < order.size(); start += B)
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + B)));
  for (size_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[g.randint(i)]);
  return batches;
}

}  // namespace seqgrad::data
