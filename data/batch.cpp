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

TeacherForcing teacher_forcing(const std::vector<std::vector<int64_t>>& tgt) {
  check(!tgt.empty(), "teacher_forcing: expected at least one target, got none");
  TeacherForcing t;
  std::vector<std::vector<int64_t>> tin, tout;
  for (const std::vector<int64_t>& y : tgt) {
    std::vector<int64_t> in{Vocab::kBos}, out = y;
    in.insert(in.end(), y.begin(), y.end());
    out.push_back(Vocab::kEos);
    t.tgt_lengths.push_back(static_cast<int64_t>(out.size()));
    tin.push_back(in);
    tout.push_back(out);
  }
  t.tgt_in = pad_sequences(tin);
  t.tgt_out = pad_sequences(tout);
  return t;
}

Batch make_batch(const std::vector<std::vector<int64_t>>& src, const std::vector<std::vector<int64_t>>& tgt) {
  check(!src.empty() && src.size() == tgt.size(), "make_batch: expected as many targets as sources (and at least one), got ",
        src.size(), " and ", tgt.size());
  Batch b;
  for (size_t i = 0; i < src.size(); ++i) {
    check(!src[i].empty(), "make_batch: source ", i, " is empty");
    b.src_lengths.push_back(static_cast<int64_t>(src[i].size()));
  }
  TeacherForcing t = teacher_forcing(tgt);
  b.src = pad_sequences(src);
  b.tgt_in = t.tgt_in;
  b.tgt_out = t.tgt_out;
  b.tgt_lengths = std::move(t.tgt_lengths);
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

std::vector<std::vector<size_t>> make_token_batches(const std::vector<int64_t>& src_lengths,
                                                    const std::vector<int64_t>& tgt_lengths, int64_t max_tokens,
                                                    int64_t max_pairs, uint64_t seed) {
  check(src_lengths.size() == tgt_lengths.size(), "make_token_batches: expected as many target lengths as source "
        "lengths, got ", tgt_lengths.size(), " and ", src_lengths.size());
  check(max_tokens >= 1 && max_pairs >= 0, "make_token_batches: expected max_tokens >= 1 and max_pairs >= 0, got ",
        max_tokens, " and ", max_pairs);
  const size_t n = src_lengths.size();
  std::vector<int64_t> size(n);
  for (size_t i = 0; i < n; ++i) {
    size[i] = std::max(src_lengths[i], tgt_lengths[i] + 1);
    check(size[i] <= max_tokens, "make_token_batches: pair ", i, " alone takes ", size[i], " positions, more than the ",
          max_tokens, " tokens a batch may hold; raise the limit to at least the longest pair");
  }
  Generator g(seed);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[g.randint(i)]);  // Fisher-Yates
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size[a] < size[b]; });
  // Greedy cut: sizes only grow along `order`, so a batch's largest is its last pair.
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  for (size_t i : order) {
    const int64_t pairs = static_cast<int64_t>(current.size()) + 1;
    if (!current.empty() && (pairs * size[i] > max_tokens || (max_pairs > 0 && pairs > max_pairs))) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.push_back(i);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  for (size_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[g.randint(i)]);
  return batches;
}

double padding_share(const std::vector<std::vector<size_t>>& batches, const std::vector<int64_t>& src_lengths,
                     const std::vector<int64_t>& tgt_lengths) {
  double real_positions = 0, all_positions = 0;
  for (const std::vector<size_t>& batch : batches) {
    int64_t longest_src = 0, longest_tgt = 0;
    for (size_t i : batch) {
      longest_src = std::max(longest_src, src_lengths[i]);
      longest_tgt = std::max(longest_tgt, tgt_lengths[i] + 1);
      real_positions += static_cast<double>(src_lengths[i] + tgt_lengths[i] + 1);
    }
    all_positions += static_cast<double>(batch.size()) * static_cast<double>(longest_src + longest_tgt);
  }
  return all_positions > 0 ? 1 - real_positions / all_positions : 0;
}

}  // namespace seqgrad::data
