// nn/memory/memory.cpp - memory reads and writes, NTM addressing and heads, the NTM, MemN2N.
#include "nn/memory/memory.h"

#include <cmath>

#include "nn/attention/attention.h"
#include "nn/core/init.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"

namespace seqgrad::nn {

namespace {

// "(B, 1)" checks for the scalar parameters of a head.
void check_column(const char* op, const char* what, const Variable& v, int64_t B) {
  check(v.dim() == 2 && v.size(0) == B && v.size(1) == 1, op, ": expected ", what, " of shape (", B, ", 1), got ",
        v.shape());
}

void check_weighting(const char* op, const char* what, const Variable& w, int64_t B, int64_t N) {
  check(w.dim() == 2 && w.size(0) == B && w.size(1) == N, op, ": expected ", what, " of shape (", B, ", ", N, "), got ",
        w.shape());
}

void check_memory(const char* op, const Variable& memory) {
  check(memory.dim() == 3, op, ": expected a memory of shape (B, N, W), got ", memory.shape());
}

// softplus(x) = log(1 + e^x), written as relu(x) + log(1 + e^-|x|) so that e^x never
// overflows. (Its gradient at exactly x = 0 comes out as 0 rather than 1/2: relu and abs both
// take 0 there. Head parameters come from a Linear layer and are never exactly 0 in practice.)
Variable softplus(const Variable& x) { return relu(x) + log(1 + exp(-abs(x))); }

}  // namespace

// ================================================================================================
// Reading and writing

// [docs:read_write]
Variable memory_read(const Variable& memory, const Variable& w) {
  check_memory("memory_read", memory);
  check_weighting("memory_read", "a weighting", w, memory.size(0), memory.size(1));
  return soft_context(w, memory);  // sum_i w_i M_i: (B, N) and (B, N, W) -> (B, W)
}

Variable memory_write(const Variable& memory, const Variable& w, const Variable& erase, const Variable& add) {
  check_memory("memory_write", memory);
  const int64_t B = memory.size(0), N = memory.size(1), W = memory.size(2);
  check_weighting("memory_write", "a weighting", w, B, N);
  check(erase.shape() == Shape{B, W} && add.shape() == Shape{B, W}, "memory_write: expected erase and add of shape (",
        B, ", ", W, "), got ", erase.shape(), " and ", add.shape());
  Variable wi = unsqueeze(w, 2);                              // (B, N, 1)
  Variable erased = memory * (1 - wi * unsqueeze(erase, 1));  // M_i (1 - w_i e): (B, N, W)
  return erased + wi * unsqueeze(add, 1);                     // + w_i a
}
// [docs:end]

// ================================================================================================
// Addressing

// [docs:addressing]
Variable content_addressing(const Variable& memory, const Variable& key, const Variable& beta) {
  check_memory("content_addressing", memory);
  const int64_t B = memory.size(0), W = memory.size(2);
  check(key.shape() == Shape{B, W}, "content_addressing: expected a key of shape (", B, ", ", W, "), got ", key.shape());
  check_column("content_addressing", "beta", beta, B);
  // The cosine score of chapter 7: cos(k, M_i) in [-1, 1]; beta > 1 sharpens, beta < 1 blurs.
  Variable similarity = make_score("cosine", W, W)->forward(key, memory);  // (B, N)
  return softmax(beta * similarity, -1);
}

Variable interpolate(const Variable& w_content, const Variable& w_prev, const Variable& gate) {
  check(w_content.dim() == 2, "interpolate: expected weightings of shape (B, N), got ", w_content.shape());
  check_weighting("interpolate", "a previous weighting", w_prev, w_content.size(0), w_content.size(1));
  check_column("interpolate", "a gate", gate, w_content.size(0));
  return gate * w_content + (1 - gate) * w_prev;  // g = 1: content only; g = 0: stay where we were
}

namespace {
// roll(w, k)_i = w_{(i - k) mod N}: the last k entries wrap around to the front.
Variable roll(const Variable& w, int64_t k) {
  const int64_t N = w.size(1);
  k = ((k % N) + N) % N;
  if (k == 0) return w;
  return concat({slice(w, 1, N - k, N), slice(w, 1, 0, N - k)}, 1);
}
}  // namespace

Variable circular_shift(const Variable& w, const Variable& shift) {
  check(w.dim() == 2, "circular_shift: expected a weighting of shape (B, N), got ", w.shape());
  const int64_t B = w.size(0), N = w.size(1);
  check(shift.dim() == 2 && shift.size(0) == B && shift.size(1) % 2 == 1 && shift.size(1) <= N,
        "circular_shift: expected shift weights of shape (", B, ", 2R + 1) with 2R + 1 <= ", N, ", got ", shift.shape());
  const int64_t R = shift.size(1) / 2;
  // A circular convolution: each possible move k contributes the weighting rolled by k,
  // weighted by s_k. With s one-hot on k = +1, the focus moves exactly one slot forward.
  Variable out = slice(shift, 1, 0, 1) * roll(w, -R);
  for (int64_t k = -R + 1; k <= R; ++k) out = out + slice(shift, 1, k + R, k + R + 1) * roll(w, k);
  return out;  // (B, N)
}

Variable sharpen(const Variable& w, const Variable& gamma) {
  check(w.dim() == 2, "sharpen: expected a weighting of shape (B, N), got ", w.shape());
  check_column("sharpen", "gamma", gamma, w.size(0));
  // w_i^gamma / sum_j w_j^gamma = exp(gamma log w_i) / sum_j exp(gamma log w_j): a softmax of
  // gamma log w, which subtracts the largest term first, so no power underflows to 0 / 0.
  return softmax(gamma * log(w + real(1e-12)), -1);
}

Variable address(const Variable& memory, const Variable& w_prev, const Addressing& a) {
  Variable w = content_addressing(memory, a.key, a.beta);  // where the key matches
  w = interpolate(w, w_prev, a.gate);                      // or where we were
  w = circular_shift(w, a.shift);                          // then move
  return sharpen(w, a.gamma);                              // and refocus what the shift blurred
}
// [docs:end]

// ================================================================================================
// NTMHead

NTMHead::NTMHead(int64_t controller, int64_t width, int64_t R, bool is_write)
    : controller_size(controller), memory_width(width), shift_range(R), write(is_write) {
  check(controller > 0 && width > 0 && R >= 0, "NTMHead: expected positive controller_size and memory_width and ",
        "shift_range >= 0, got ", controller, ", ", width, " and ", R);
  const int64_t outputs = width + 1 + 1 + (2 * R + 1) + 1 + (is_write ? 2 * width : 0);
  linear = register_module("linear", std::make_shared<Linear>(controller, outputs));
}

std::string NTMHead::extra_repr() const {
  return cat("controller_size=", controller_size, ", memory_width=", memory_width, ", shift_range=", shift_range,
             ", write=", write ? "true" : "false");
}

// [docs:head]
NTMHeadOutput NTMHead::emit(const Variable& h) {
  const int64_t W = memory_width, S = 2 * shift_range + 1;
  std::vector<int64_t> sizes{W, 1, 1, S, 1};
  if (write) sizes.insert(sizes.end(), {W, W});
  std::vector<Variable> p = split(linear->forward(h), sizes, 1);  // (B, W), (B, 1), (B, 1), (B, S), (B, 1) ...
  NTMHeadOutput o;
  o.addressing.key = p[0];
  o.addressing.beta = softplus(p[1]);       // > 0
  o.addressing.gate = sigmoid(p[2]);        // in (0, 1)
  o.addressing.shift = softmax(p[3], -1);   // a distribution over the moves -R..R
  o.addressing.gamma = 1 + softplus(p[4]);  // >= 1: sharpening never blurs
  if (write) {
    o.erase = sigmoid(p[5]);  // in (0, 1): how much of each column to forget
    o.add = tanh(p[6]);       // what to write
  }
  return o;
}
// [docs:end]

// ================================================================================================
// NTM

NTM::NTM(const NTMOptions& o) : options(o) {
  check(o.input_size > 0 && o.output_size > 0 && o.controller_size > 0,
        "NTM: expected positive input_size, output_size and controller_size, got ", o.input_size, ", ", o.output_size,
        " and ", o.controller_size);
  check(o.memory_slots > 0 && o.memory_width > 0 && o.shift_range >= 0 && 2 * o.shift_range + 1 <= o.memory_slots,
        "NTM: expected a memory of N >= 2R + 1 slots of W > 0 numbers, got N = ", o.memory_slots, ", W = ",
        o.memory_width, ", R = ", o.shift_range);
  controller = register_module("controller", std::make_shared<Linear>(o.input_size + o.memory_width, o.controller_size));
  write_head = register_module("write_head", std::make_shared<NTMHead>(o.controller_size, o.memory_width, o.shift_range, true));
  read_head = register_module("read_head", std::make_shared<NTMHead>(o.controller_size, o.memory_width, o.shift_range, false));
  out = register_module("out", std::make_shared<Linear>(o.controller_size + o.memory_width, o.output_size));
}

std::string NTM::extra_repr() const {
  return cat("input_size=", options.input_size, ", output_size=", options.output_size, ", controller_size=",
             options.controller_size, ", memory=(", options.memory_slots, ", ", options.memory_width,
             "), shift_range=", options.shift_range);
}

// [docs:ntm_step]
NTMResult NTM::forward_sequence(const Variable& x) {
  check(x.dim() == 3 && x.size(1) >= 1 && x.size(2) == options.input_size, "NTM: expected input of shape (B, T, ",
        options.input_size, ") with T >= 1, got ", x.shape());
  const int64_t B = x.size(0), T = x.size(1), N = options.memory_slots, W = options.memory_width;
  Variable memory(full({B, N, W}, real(1e-6)));  // M_0: blank, but not exactly 0 (cosine needs a length)
  Tensor first_slot = zeros({B, N});
  for (int64_t b = 0; b < B; ++b) first_slot.data()[b * N] = 1;
  Variable w_write(first_slot), w_read(first_slot), read(zeros({B, W}));
  std::vector<Variable> outputs, reads, writes;
  for (int64_t t = 0; t < T; ++t) {
    Variable x_t = squeeze(slice(x, 1, t, t + 1), 1);                 // (B, C)
    Variable h = tanh(controller->forward(concat({x_t, read}, 1)));   // (B, H)
    NTMHeadOutput wh = write_head->emit(h);
    w_write = address(memory, w_write, wh.addressing);                // (B, N)
    memory = memory_write(memory, w_write, wh.erase, wh.add);         // (B, N, W)
    w_read = address(memory, w_read, read_head->emit(h).addressing);  // (B, N)
    read = memory_read(memory, w_read);                               // (B, W)
    outputs.push_back(out->forward(concat({h, read}, 1)));            // (B, output_size)
    reads.push_back(w_read);
    writes.push_back(w_write);
  }
  return {stack(outputs, 1), stack(reads, 1), stack(writes, 1), memory};
}
// [docs:end]

// ================================================================================================
// MemN2N

MemN2N::MemN2N(const MemN2NOptions& o) : options(o) {
  check(o.vocab_size > 1 && o.memory_size > 0 && o.embed_dim > 0 && o.hops > 0,
        "MemN2N: expected vocab_size > 1 and positive memory_size, embed_dim and hops, got ", o.vocab_size, ", ",
        o.memory_size, ", ", o.embed_dim, " and ", o.hops);
  embeddings = register_module("embeddings", std::make_shared<ModuleList<Embedding>>());
  temporal = register_module("temporal", std::make_shared<ModuleList<Embedding>>());
  for (int64_t k = 0; k <= o.hops; ++k) {
    // N(0, 0.1^2) as in the paper: a sentence sums several word vectors, so start them small.
    auto words = std::make_shared<Embedding>(o.vocab_size, o.embed_dim, /*padding_idx=*/0);
    init::normal_(words->weight.value(), 0, real(0.1));
    std::fill(words->weight.value().data(), words->weight.value().data() + o.embed_dim, real(0));  // <pad>
    embeddings->push_back(words);
    if (o.temporal) {
      auto ages = std::make_shared<Embedding>(o.memory_size, o.embed_dim);
      init::normal_(ages->weight.value(), 0, real(0.1));
      temporal->push_back(ages);
    }
  }
}

std::string MemN2N::extra_repr() const {
  return cat("vocab_size=", options.vocab_size, ", memory_size=", options.memory_size, ", embed_dim=",
             options.embed_dim, ", hops=", options.hops, ", temporal=", options.temporal ? "true" : "false");
}

// [docs:memn2n]
MemN2NResult MemN2N::forward(const Tensor& story, const Tensor& question) {
  check(story.dim() == 3 && story.size(1) == options.memory_size, "MemN2N: expected a story of shape (B, ",
        options.memory_size, ", L), got ", story.shape());
  check(question.dim() == 2 && question.size(0) == story.size(0), "MemN2N: expected a question of shape (",
        story.size(0), ", Lq), got ", question.shape());
  const int64_t B = story.size(0), N = story.size(1), L = story.size(2);
  // Empty slots (all <pad>) are masked; age = sentences between a slot and the newest one.
  Tensor empty = ones({B, N}), age = zeros({B, N});
  for (int64_t b = 0; b < B; ++b) {
    int64_t newest = -1;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < L; ++j)
        if (story.data()[(b * N + i) * L + j] != 0) {
          empty.data()[b * N + i] = 0;
          newest = i;
        }
    check(newest >= 0, "MemN2N: story ", b, " has no sentence; expected at least one");
    for (int64_t i = 0; i <= newest; ++i) age.data()[b * N + i] = static_cast<real>(newest - i);
  }
  // A sentence (or the question) is the sum of its word vectors; pads add nothing.
  auto slots = [&](int64_t k) {  // (B, N, C)
    Variable m = sum((*embeddings)[k]->forward(story), 2);  // (B, N, L, C) -> (B, N, C)
    return options.temporal ? m + (*temporal)[k]->forward(age) : m;
  };
  Variable u = sum((*embeddings)[0]->forward(question), 1);  // (B, C)
  MemN2NResult r;
  Variable keys = slots(0);
  for (int64_t k = 0; k < options.hops; ++k) {
    Variable values = slots(k + 1);                                     // adjacent tying: C_k = A_{k+1}
    Variable scores = squeeze(matmul(keys, unsqueeze(u, 2)), 2);         // u . m_i: (B, N)
    AttentionResult read;
    if (linear_start) {  // p = u . m_i, without the softmax (empty slots still weigh 0)
      read.weights = scores * Variable(real(1) - empty);
      read.context = soft_context(read.weights, values);                // o = sum_i p_i c_i (B, C)
    } else {
      read = attend(scores, values, empty);                             // p (B, N), o (B, C)
    }
    u = u + read.context;                                               // u_{k+1} = u_k + o_k
    r.weights.push_back(read.weights);
    keys = values;
  }
  r.logits = matmul(u, (*embeddings)[options.hops]->weight, false, /*trans_b=*/true);  // (B, V)
  return r;
}
// [docs:end]

}  // namespace seqgrad::nn
