// autograd/ops.h - every differentiable op, on Variables.
//
// Each op is one function in ops_*.cpp: it computes the value with a tensor/ kernel and then
// attaches its backward right beside it (micrograd's rule). The comment on each op gives the
// forward formula; the backward's derivation is in the .cpp, under the forward line it
// differentiates. Binary ops broadcast like numpy; their backward sums the gradient back to
// each input's shape with sum_to_shape. Non-differentiable inputs (indices, masks, targets)
// are plain Tensors. Every op here has a gradcheck test in tests/autograd/test_grad_ops.cpp.
//
//   ops_math.cpp    add sub mul div neg pow exp log sqrt abs tanh sigmoid relu gelu
//   ops_reduce.cpp  sum mean max
//   ops_shape.cpp   reshape transpose permute slice concat stack split chunk index_select
//                   embedding gather scatter_add masked_fill where
//   ops_nn.cpp      matmul linear softmax scaled_masked_softmax log_softmax cross_entropy
//                   dropout layer_norm lstm_cell conv2d max_pool2d avg_pool2d batch_norm
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/variable.h"

namespace seqgrad {

// ================================================================================================
// Elementwise arithmetic (broadcasting)

Variable add(const Variable& a, const Variable& b);  // a + b
Variable sub(const Variable& a, const Variable& b);  // a - b
Variable mul(const Variable& a, const Variable& b);  // a * b
Variable div(const Variable& a, const Variable& b);  // a / b
Variable neg(const Variable& x);                     // -x

Variable operator+(const Variable& a, const Variable& b);
Variable operator-(const Variable& a, const Variable& b);
Variable operator*(const Variable& a, const Variable& b);
Variable operator/(const Variable& a, const Variable& b);
Variable operator-(const Variable& x);
Variable operator+(const Variable& a, real s);
Variable operator-(const Variable& a, real s);
Variable operator*(const Variable& a, real s);
Variable operator/(const Variable& a, real s);
Variable operator+(real s, const Variable& a);
Variable operator-(real s, const Variable& a);
Variable operator*(real s, const Variable& a);
Variable operator/(real s, const Variable& a);

// ================================================================================================
// Elementwise functions

Variable pow(const Variable& x, real exponent);  // x^p
Variable exp(const Variable& x);                 // e^x
Variable log(const Variable& x);                 // ln x
Variable sqrt(const Variable& x);                // x^(1/2)
Variable abs(const Variable& x);                 // |x|  (gradient sign(x), 0 at 0)
Variable tanh(const Variable& x);                // (e^x - e^-x) / (e^x + e^-x)
Variable sigmoid(const Variable& x);             // 1 / (1 + e^-x)
Variable relu(const Variable& x);                // max(x, 0)  (gradient 0 at 0)
Variable gelu(const Variable& x);                // x Phi(x), Phi = standard normal CDF

// ================================================================================================
// Reductions

Variable sum(const Variable& x);                                   // all elements -> shape []
Variable sum(const Variable& x, int64_t axis, bool keepdim = false);
Variable sum(const Variable& x, const std::vector<int64_t>& axes, bool keepdim = false);
Variable mean(const Variable& x);
Variable mean(const Variable& x, int64_t axis, bool keepdim = false);
Variable mean(const Variable& x, const std::vector<int64_t>& axes, bool keepdim = false);
// Largest value along an axis; the gradient flows to the (first) largest element only.
Variable max(const Variable& x, int64_t axis, bool keepdim = false);

// ================================================================================================
// Shapes and indexing

Variable reshape(const Variable& x, const Shape& shape);  // one size may be -1
Variable transpose(const Variable& x, int64_t axis0, int64_t axis1);
Variable permute(const Variable& x, const std::vector<int64_t>& order);
Variable unsqueeze(const Variable& x, int64_t axis);
Variable squeeze(const Variable& x, int64_t axis);
Variable slice(const Variable& x, int64_t axis, int64_t start, int64_t end);  // [start, end)
Variable narrow(const Variable& x, int64_t axis, int64_t start, int64_t length);
Variable concat(const std::vector<Variable>& xs, int64_t axis);
Variable stack(const std::vector<Variable>& xs, int64_t axis);
std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& sizes, int64_t axis);
std::vector<Variable> split(const Variable& x, int64_t size, int64_t axis);
std::vector<Variable> chunk(const Variable& x, int64_t chunks, int64_t axis);

// Rows of x picked by a 1-D index along an axis.
Variable index_select(const Variable& x, int64_t axis, const Tensor& index);
// Embedding lookup: weight (V, C), ids of any shape (...) -> (..., C). A repeated id's rows
// add up in weight's gradient; the row of padding_idx (if >= 0) never receives a gradient.
Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx = -1);
// torch.gather along an axis (index has x's number of axes).
Variable gather(const Variable& x, int64_t axis, const Tensor& index);
// gather's adjoint: zeros(shape) with src added at the places index names along an axis,
// torch.zeros(shape).scatter_add(axis, index, src); index has src's shape, and repeated
// places add up. Spreads a few values back over a longer axis (local attention's window).
Variable scatter_add(const Shape& shape, int64_t axis, const Tensor& index, const Variable& src);
// x where mask == 0, `value` where mask != 0 (mask broadcasts to x); no gradient to filled places.
Variable masked_fill(const Variable& x, const Tensor& mask, real value);
// cond ? a : b elementwise, all broadcasting together.
Variable where(const Tensor& cond, const Variable& a, const Variable& b);

// ================================================================================================
// Neural-network primitives

// (..., M, K) @ (..., K, N) -> (..., M, N), batch axes broadcasting; the flags transpose the
// last two axes of an operand first (see tensor/matmul.h).
Variable matmul(const Variable& a, const Variable& b, bool trans_a = false, bool trans_b = false);
// x W^T + b for x (..., in), W (out, in), b (out) or an undefined Variable: the Linear layer's
// product as one node, with the bias added by the matrix kernel (tensor/matmul.h).
// With `residual`, residual + x W^T + b, still one node: each of the matrix kernel's tasks
// copies its block of the residual into the output and adds the product on top, so there is
// no separate addition (an RNN's gx + h W_hh^T + b_hh, nn/recurrent/rnn.cpp). Its gradient is dy itself.
Variable linear(const Variable& x, const Variable& weight, const Variable& bias,
                const Variable& residual = Variable());

// While one lives, on the calling thread, linear() packs each of `weights` once for its forward
// product x W^T and once for its backward's dy W, and reuses the packs at every later call
// (tensor/matmul.h, PackedRight) instead of copying the whole matrix into the kernel's layout
// each time: for a loop that multiplies by the same weights at every step, an RNN's W_hh over
// time (nn/recurrent/rnn.cpp) or an attention decoder's cell. The results are the same bits.
// The weights must not change while the scope lives or while a graph built in it still has
// its backward to run (an optimizer steps after backward, so training never does). Scopes nest.
class ReusePackedWeights {
 public:
  explicit ReusePackedWeights(const std::vector<Variable>& weights);
  ~ReusePackedWeights();
  ReusePackedWeights(const ReusePackedWeights&) = delete;
  ReusePackedWeights& operator=(const ReusePackedWeights&) = delete;

  struct Packs;  // one weight's packs, made when first needed (autograd/ops_nn.cpp)
  // The packs of `w` if a live scope of this thread holds it; else null.
  static std::shared_ptr<Packs> find(const Tensor& w);

 private:
  std::vector<std::shared_ptr<Packs>> packs_;
  ReusePackedWeights* outer_;  // the scope this one is inside, or null
};

// 2-D convolution, as torch.nn.functional.conv2d: x (N, C_in, H, W), weight (C_out,
// C_in / groups, kH, kW), bias (C_out) or undefined -> (N, C_out, H_out, W_out). im2col and the
// blocked matmul forward; backward dW = dout cols^T, dx = col2im(W^T dout) (tensor/conv.h).
struct Conv2dArgs {
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
};
Variable conv2d(const Variable& x, const Variable& weight, const Variable& bias, const Conv2dArgs& args = Conv2dArgs());

Variable softmax(const Variable& x, int64_t axis);      // exp(x_i) / sum_j exp(x_j)
Variable log_softmax(const Variable& x, int64_t axis);  // x_i - log sum_j exp(x_j)
// Attention's weights as one node: softmax(masked_fill(x * scale, mask, -inf)) along the last
// axis; mask (no gradient; may be undefined) broadcasts to x's shape (tensor/softmax.h).
Variable scaled_masked_softmax(const Variable& x, const Tensor& mask, real scale);

enum class Reduction { None, Mean, Sum };

struct CrossEntropyOptions {
  int64_t ignore_index = -100;  // targets equal to this contribute neither loss nor count
  real label_smoothing = 0;     // eps: the target distribution is (1-eps) onehot + eps/V
  Reduction reduction = Reduction::Mean;

  CrossEntropyOptions& with_ignore_index(int64_t v) { ignore_index = v; return *this; }
  CrossEntropyOptions& with_label_smoothing(real v) { label_smoothing = v; return *this; }
  CrossEntropyOptions& with_reduction(Reduction v) { reduction = v; return *this; }
};

// Fused log-softmax + negative log-likelihood. logits (..., V), targets (...) holding class
// ids. Note the class axis is LAST (PyTorch puts it at axis 1), so (B, T, V) logits take
// (B, T) targets directly. Mean reduction divides by the number of non-ignored targets; when
// every target is ignored the loss is 0 with zero gradient (PyTorch gives NaN).
Variable cross_entropy(const Variable& logits, const Tensor& targets,
                       const CrossEntropyOptions& options = CrossEntropyOptions());

// Inverted dropout: in training, zero each element with probability p and scale the rest by
// 1 / (1 - p), so the expected value is unchanged; outside training, the identity.
Variable dropout(const Variable& x, real p, bool training);

// ================================================================================================
// Fused layers (kernels and formulas: tensor/fused.h). One graph node each instead of a chain
// of small ops; the composed versions in nn/core/layernorm.cpp and nn/recurrent/rnn.cpp define what they compute.

// Normalise the last axis: (x - mean) / sqrt(var + eps) * weight + bias. weight and bias are
// (C) or undefined (no affine part).
Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, real eps);

// One LSTM step from its pre-activation gates (B, 4H), order [i f g o], and the previous cell
// c (B, H) -> [h' | c'] (B, 2H); c' = sig(f) c + sig(i) tanh(g), h' = sig(o) tanh(c').
Variable lstm_cell(const Variable& gates, const Variable& c);

// ================================================================================================
// Pooling and batch normalisation (kernels: tensor/pool.h, tensor/batchnorm.h)

// 2-D pooling, as torch.nn.functional.max_pool2d / avg_pool2d: x (N, C, H, W) ->
// (N, C, H_out, W_out), H_out = (H + 2 padding - kH) / stride + 1, the same for W. Max pooling
// keeps each window's largest value and sends its gradient to that cell alone (the first one
// on ties); average pooling keeps the mean, padded cells counting as zeros (PyTorch's
// count_include_pad), and shares the gradient evenly. Padding is at most half the kernel.
//   max_pool2d(x, 2)                                                 (N, C, H / 2, W / 2)
//   avg_pool2d(x, Pool2dOptions(3).with_stride(1).with_padding(1))   (N, C, H, W)
struct Pool2dOptions {
  Pool2dOptions(int64_t kernel_size) : Pool2dOptions(kernel_size, kernel_size) {}  // implicit: max_pool2d(x, 2)
  Pool2dOptions(int64_t kernel_h, int64_t kernel_w)
      : kernel_h(kernel_h), kernel_w(kernel_w), stride_h(kernel_h), stride_w(kernel_w) {}
  int64_t kernel_h, kernel_w;
  int64_t stride_h, stride_w;  // by default the kernel size: windows side by side
  int64_t padding_h = 0, padding_w = 0;

  Pool2dOptions& with_stride(int64_t v) { return with_stride(v, v); }
  Pool2dOptions& with_stride(int64_t h, int64_t w) { stride_h = h; stride_w = w; return *this; }
  Pool2dOptions& with_padding(int64_t v) { return with_padding(v, v); }
  Pool2dOptions& with_padding(int64_t h, int64_t w) { padding_h = h; padding_w = w; return *this; }
};
Variable max_pool2d(const Variable& x, const Pool2dOptions& options);
Variable avg_pool2d(const Variable& x, const Pool2dOptions& options);

// Batch normalisation, as torch.nn.functional.batch_norm: x (N, C, ...) is normalised per
// channel over its M = N x (the rest) values, y = (x - mean_c) / sqrt(var_c + eps) weight_c + bias_c
// (weight, bias (C) or undefined). In training, mean and var are the batch's own (var biased),
// and running_mean / running_var (C), when defined, are updated in place (a Tensor is a handle):
//   running = (1 - momentum) running + momentum batch statistic   (the variance unbiased: M / (M - 1))
// Outside training the running statistics are used, and are required. One node; the backward
// is the closed form derived in tensor/batchnorm.cpp.
Variable batch_norm(const Variable& x, Tensor running_mean, Tensor running_var, const Variable& weight,
                    const Variable& bias, bool training, real momentum, real eps);

}  // namespace seqgrad
