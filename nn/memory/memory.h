// nn/memory/memory.h - attention as memory addressing: end-to-end memory networks and the Neural
// Turing Machine's read and write heads.
//
// A memory is a matrix M (B, N, W): N slots of W numbers. Reading is attention with the slots
// as values: a weighting w (B, N), w_i >= 0 and sum_i w_i = 1, reads r = sum_i w_i M_i (B, W).
// The models differ in how they find w:
//   MemN2N (Sukhbaatar et al., 2015)  content only. The slots are embedded sentences and the
//        query an embedded question; w = softmax(u . m_i), and each of K hops adds what it read
//        to the query, u <- u + o, so the next hop can look for something else.
//   NTM (Graves et al., 2014)  content, then location: w_c = softmax(beta cos(k, M_i)); a gate
//        g mixes in the previous weighting; a circular convolution with a kernel s moves the
//        focus by -R..R slots; gamma >= 1 sharpens it again. A write erases, then adds:
//        M_i <- M_i (1 - w_i e) + w_i a.
// Everything is composed from autograd ops (no new backward): cosine from nn/attention/attention.h, the
// shift from slice and concat, the sharpening as a softmax of gamma log w. Gradchecks are in
// tests/nn/test_grad_memory.cpp. Read next: examples/09_memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/core/embedding.h"
#include "nn/core/linear.h"
#include "nn/core/module.h"

namespace seqgrad::nn {

// ================================================================================================
// Reading and writing a memory M (B, N, W) with a weighting w (B, N)

// r = sum_i w_i M_i                                                       -> (B, W)
Variable memory_read(const Variable& memory, const Variable& w);
// M_i (1 - w_i e) + w_i a: erase e (B, W) in [0, 1], add a (B, W)        -> (B, N, W)
Variable memory_write(const Variable& memory, const Variable& w, const Variable& erase, const Variable& add);

// ================================================================================================
// NTM addressing, one function per step (Graves et al. 2014, section 3.3)

// w_c = softmax_i(beta cos(key, M_i)): key (B, W), beta (B, 1) > 0          -> (B, N)
Variable content_addressing(const Variable& memory, const Variable& key, const Variable& beta);
// w_g = g w_c + (1 - g) w_prev: w_content, w_prev (B, N), gate (B, 1) in [0, 1]
Variable interpolate(const Variable& w_content, const Variable& w_prev, const Variable& gate);
// w~_i = sum_{k=-R..R} s_k w_{(i - k) mod N}: w (B, N), shift (B, 2R + 1) with 2R + 1 <= N;
// s_k is the weight of moving the focus k slots forward (column R + k of shift).
Variable circular_shift(const Variable& w, const Variable& shift);
// w_i^gamma / sum_j w_j^gamma: w (B, N), gamma (B, 1) >= 1
Variable sharpen(const Variable& w, const Variable& gamma);

// A head's addressing parameters, each already in its range.
struct Addressing {
  Variable key;    // (B, W)
  Variable beta;   // (B, 1), > 0: key strength
  Variable gate;   // (B, 1), in [0, 1]: 1 = content, 0 = the previous weighting
  Variable shift;  // (B, 2R + 1), rows sum to 1
  Variable gamma;  // (B, 1), >= 1
};

// The four steps in order: content, interpolation, shift, sharpening.     -> (B, N)
Variable address(const Variable& memory, const Variable& w_prev, const Addressing& a);

// ================================================================================================
// NTMHead: a controller's output h (B, H) -> one head's parameters, through one Linear layer
//   key = raw, beta = softplus, gate = sigmoid, shift = softmax, gamma = 1 + softplus
//   write heads also: erase = sigmoid, add = tanh

struct NTMHeadOutput {
  Addressing addressing;
  Variable erase, add;  // (B, W); write heads only
};

class NTMHead : public Module {
 public:
  NTMHead(int64_t controller_size, int64_t memory_width, int64_t shift_range = 1, bool write = false);
  std::string name() const override { return "NTMHead"; }
  std::string extra_repr() const override;
  // h (B, H) -> the head's parameters (a Module's forward(Variable) must return a Variable)
  NTMHeadOutput emit(const Variable& h);

  int64_t controller_size, memory_width, shift_range;
  bool write;
  std::shared_ptr<Linear> linear;  // H -> W + 1 + 1 + (2R + 1) + 1 (+ 2W for a write head)
};

// ================================================================================================
// NTM: a feed-forward controller, one write head and one read head. At every step t:
//   h_t = tanh(W_c [x_t; r_{t-1}] + b_c)     the controller sees the input and the last read
//   write:  w^w_t = address(M_{t-1}, w^w_{t-1}, ...),  M_t = write(M_{t-1}, w^w_t, e_t, a_t)
//   read:   w^r_t = address(M_t, w^r_{t-1}, ...),      r_t = read(M_t, w^r_t)
//   y_t = W_o [h_t; r_t] + b_o
// The memory starts at a small constant, both weightings on slot 0, r_0 = 0. The controller
// has no state of its own, so whatever must be remembered goes through the memory.

struct NTMOptions {
  NTMOptions(int64_t input_size, int64_t output_size) : input_size(input_size), output_size(output_size) {}
  int64_t input_size, output_size;
  int64_t controller_size = 64;
  int64_t memory_slots = 16;  // N
  int64_t memory_width = 8;   // W
  int64_t shift_range = 1;    // R: shifts -R..R

  NTMOptions& with_controller_size(int64_t v) { controller_size = v; return *this; }
  NTMOptions& with_memory(int64_t slots, int64_t width) { memory_slots = slots; memory_width = width; return *this; }
  NTMOptions& with_shift_range(int64_t v) { shift_range = v; return *this; }
};

struct NTMResult {
  Variable output;         // (B, T, output_size)
  Variable read_weights;   // (B, T, N)
  Variable write_weights;  // (B, T, N)
  Variable memory;         // (B, N, W): after the last step
};

class NTM : public Module {
 public:
  explicit NTM(const NTMOptions& options);
  std::string name() const override { return "NTM"; }
  std::string extra_repr() const override;
  NTMResult forward_sequence(const Variable& x);  // x (B, T, input_size)
  Variable forward(const Variable& x) override { return forward_sequence(x).output; }

  NTMOptions options;
  std::shared_ptr<Linear> controller, out;
  std::shared_ptr<NTMHead> write_head, read_head;
};

// ================================================================================================
// MemN2N: an end-to-end memory network with K hops and adjacent weight tying.
//   m_i = sum_j A_k[x_ij] + T_A_k[age_i]        memory keys of hop k         (B, N, C)
//   c_i = sum_j A_{k+1}[x_ij] + T_A_{k+1}[age_i] memory values of hop k      (B, N, C)
//   p = softmax(u . m_i),  o = sum_i p_i c_i,  u <- u + o                   (B, N), (B, C)
//   logits = u A_{K+1}^T                                                     (B, V)
// A sentence is a bag of words (the sum of its word vectors); age_i counts sentences from the
// newest (0), so the temporal vectors T_A can teach the model that the latest fact wins. The
// question is embedded with A_1 (u_1 = sum_j A_1[q_j]). Adjacent tying: the value embedding of
// hop k is the key embedding of hop k + 1, and the last one also scores the answers.

struct MemN2NOptions {
  MemN2NOptions(int64_t vocab_size, int64_t memory_size) : vocab_size(vocab_size), memory_size(memory_size) {}
  int64_t vocab_size, memory_size;  // V, N
  int64_t embed_dim = 32;           // C
  int64_t hops = 3;                 // K
  bool temporal = true;             // add T_A[age]

  MemN2NOptions& with_embed_dim(int64_t v) { embed_dim = v; return *this; }
  MemN2NOptions& with_hops(int64_t v) { hops = v; return *this; }
  MemN2NOptions& with_temporal(bool v) { temporal = v; return *this; }
};

struct MemN2NResult {
  Variable logits;               // (B, V): the answer word
  std::vector<Variable> weights;  // one (B, N) per hop: where that hop read
};

class MemN2N : public Module {
 public:
  explicit MemN2N(const MemN2NOptions& options);
  std::string name() const override { return "MemN2N"; }
  std::string extra_repr() const override;
  // story (B, N, L) and question (B, Lq): word ids, 0 = <pad>; a slot of only <pad> is empty
  // and gets weight 0. Every story needs at least one sentence.
  MemN2NResult forward(const Tensor& story, const Tensor& question);

  MemN2NOptions options;
  // Linear start (the paper's section 4.2): while true, each hop uses the raw scores u . m_i
  // as its weights instead of their softmax. Training starts linear and switches the softmax
  // on later; the softmax from the first step often settles in a poor local minimum.
  bool linear_start = false;
  std::shared_ptr<ModuleList<Embedding>> embeddings;  // A_1 .. A_{K+1}: (V, C), <pad> = 0
  std::shared_ptr<ModuleList<Embedding>> temporal;    // T_A_1 .. T_A_{K+1}: (N, C)
};

}  // namespace seqgrad::nn
