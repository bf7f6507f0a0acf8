// autograd/ops_nn.cpp - matmul, linear, softmax, attention's scaled masked softmax, log-softmax,
// cross-entropy, dropout, conv2d, the fused layer norm and LSTM cell, pooling and batch norm.
#include <cmath>
#include <memory>
#include <vector>

#include "autograd/ops.h"
#include "tensor/batchnorm.h"
#include "tensor/check.h"
#include "tensor/conv.h"
#include "tensor/elementwise.h"
#include "tensor/fused.h"
#include "tensor/matmul.h"
#include "tensor/pool.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/softmax.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

// ================================================================================================
// matmul

// Adds op(x) op(y), a matmul's gradient for input i, to that input's gradient: straight into
// the gradient buffer (add_grad_into) when the input was not broadcast, i.e. its batch axes are
// dC's; otherwise computed apart and summed back over the broadcast axes.
void add_matmul_grad(Node& n, size_t i, const Tensor& dC, const Tensor& x, bool tx, const Tensor& y, bool ty) {
  const Shape& in = n.inputs[i].shape();
  if (Shape(in.begin(), in.end() - 2) == Shape(dC.shape().begin(), dC.shape().end() - 2))
    n.add_grad_into(i, [&](Tensor& g, bool accumulate) { matmul_into(g, x, y, tx, ty, accumulate); });
  else
    n.add_grad(i, sum_to_shape(matmul(x, y, tx, ty), in));
}

// [docs:matmul]
Variable matmul(const Variable& a, const Variable& b, bool ta, bool tb) {
  // (B, T, C) @ (C, H): fold the batch axes of a into its rows, so both the product and the
  // weight gradient are single large gemms instead of B small ones.
  if (a.dim() > 2 && b.dim() == 2 && !ta) {
    Shape out_shape = a.shape();
    out_shape.back() = tb ? b.size(0) : b.size(1);
    return reshape(matmul(reshape(a, {-1, a.size(-1)}), b, false, tb), out_shape);
  }
  const Tensor av = a.value(), bv = b.value();
  return make_result("matmul", matmul(av, bv, ta, tb), {a, b}, [av, bv, ta, tb](const Tensor& dC, Node& n) {
    // C = op(A) op(B)  =>  d op(A) = dC op(B)^T,   d op(B) = op(A)^T dC.
    // Undoing op on the left-hand sides gives four cases per operand, folded into the flags:
    //   dA = ta ? op(B) dC^T : dC op(B)^T          dB = tb ? dC^T op(A) : op(A)^T dC
    // The transposes are flags to the kernel: no transposed copy is ever made.
    if (n.needs_grad(0)) {
      if (ta)
        add_matmul_grad(n, 0, dC, bv, tb, dC, true);  // dA = op(B) dC^T
      else
        add_matmul_grad(n, 0, dC, dC, false, bv, !tb);  // dA = dC op(B)^T
    }
    if (n.needs_grad(1)) {
      if (tb)
        add_matmul_grad(n, 1, dC, dC, true, av, ta);  // dB = dC^T op(A)
      else
        add_matmul_grad(n, 1, dC, av, !ta, dC, false);  // dB = op(A)^T dC
    }
  });
}
// [docs:end]

// ================================================================================================
// linear: x W^T + b in one node

// [docs:reuse_packed_weights]
struct ReusePackedWeights::Packs {
  Tensor w;                                 // (out, in)
  std::unique_ptr<PackedRight> wt, plain;  // W^T (x W^T, forward) and W (dy W, backward)
  const PackedRight& transposed() {
    if (!wt) wt = std::make_unique<PackedRight>(w, /*trans_b=*/true);
    return *wt;
  }
  const PackedRight& as_is() {
    if (!plain) plain = std::make_unique<PackedRight>(w, /*trans_b=*/false);
    return *plain;
  }
};

namespace {
thread_local ReusePackedWeights* t_reuse_scope = nullptr;  // the innermost live scope
}  // namespace

ReusePackedWeights::ReusePackedWeights(const std::vector<Variable>& weights) : outer_(t_reuse_scope) {
  for (const Variable& w : weights)
    if (w.defined() && w.dim() == 2) packs_.push_back(std::make_shared<Packs>(Packs{w.value(), nullptr, nullptr}));
  t_reuse_scope = this;
}

ReusePackedWeights::~ReusePackedWeights() { t_reuse_scope = outer_; }

std::shared_ptr<ReusePackedWeights::Packs> ReusePackedWeights::find(const Tensor& w) {
  for (const ReusePackedWeights* s = t_reuse_scope; s; s = s->outer_)
    for (const std::shared_ptr<Packs>& p : s->packs_)
      if (p->w.shares_storage(w) && p->w.data() == w.data() && p->w.shape() == w.shape()) return p;
  return nullptr;
}
// [docs:end]

// [docs:linear_op]
Variable linear(const Variable& x, const Variable& w, const Variable& b, const Variable& residual) {
  const Tensor xv = x.value(), wv = w.value();
  // The weight's packs, if a ReusePackedWeights scope holds it (the same bits either way).
  const std::shared_ptr<ReusePackedWeights::Packs> packs = ReusePackedWeights::find(wv);
  const Tensor bv = b.defined() ? b.value() : Tensor(), rv = residual.defined() ? residual.value() : Tensor();
  const Tensor y = packs ? linear(xv, packs->transposed(), bv, rv) : linear(xv, wv, bv, rv);  // checks the shapes
  std::vector<Variable> inputs{x, w};
  if (b.defined()) inputs.push_back(b);
  // Where b and residual sit among the inputs; 0 means absent (input 0 is always x).
  const size_t b_at = b.defined() ? 2 : 0;
  const size_t residual_at = residual.defined() ? inputs.size() : 0;
  if (residual.defined()) inputs.push_back(residual);
  return make_result("linear", y, inputs, [xv, wv, packs, b_at, residual_at](const Tensor& dy, Node& n) {
    // y = x W^T + b over the rows of x (R of them, every axis but the last):
    //   dx = dy W   (R, out) @ (out, in)      dW = dy^T x   (out, R) @ (R, in)
    //   db = the sum of dy's rows             (each row of y got the same b)
    //   d residual = dy                        (it was added as it is)
    // Both products go straight into the gradients (add_grad_into): a weight used at every
    // step of a sequence adds its gradient in place, with no temporary (out, in) per step.
    const int64_t out = wv.size(0), in = wv.size(1);
    const int64_t rows = numel(Shape(xv.shape().begin(), xv.shape().end() - 1));  // R
    const Tensor dy2 = dy.reshape({rows, out}), x2 = xv.reshape({rows, in});
    if (n.needs_grad(0))
      n.add_grad_into(0, [&](Tensor& dx, bool accumulate) {
        Tensor dx2 = dx.reshape({rows, in});  // the same buffer, seen as (R, in)
        if (packs)
          gemm(rows, dy2.data(), false, packs->as_is(), dx2.data(), nullptr, accumulate);
        else
          matmul_into(dx2, dy2, wv, false, false, accumulate);
      });
    if (n.needs_grad(1))
      n.add_grad_into(1, [&](Tensor& dw, bool accumulate) { matmul_into(dw, dy2, x2, /*trans_a=*/true, false, accumulate); });
    if (b_at && n.needs_grad(b_at)) n.add_grad(b_at, sum_to_shape(dy, {out}));
    if (residual_at && n.needs_grad(residual_at)) n.add_grad(residual_at, dy);
  });
}
// [docs:end]

// ================================================================================================
// conv2d: im2col, one batched matmul, and the reverse (tensor/conv.h)

// [docs:conv2d_op]
Variable conv2d(const Variable& x, const Variable& w, const Variable& b, const Conv2dArgs& a) {
  const Conv2dGeometry g = conv2d_geometry(x.shape(), w.shape(), a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.dil_h,
                                           a.dil_w, a.groups);
  check(!b.defined() || b.shape() == Shape{g.C_out}, "conv2d: expected a bias of shape [", g.C_out, "], got ",
        b.defined() ? b.shape() : Shape{});
  const int64_t G = g.groups, Og = g.group_out(), K = g.K();
  const Tensor cols = im2col(x.value(), g);                         // (N, G, K, L)
  const Tensor wg = w.value().reshape({G, Og, K});                  // each group's filters as rows
  Tensor y = matmul(wg, cols);                                      // (G, Og, K) @ (N, G, K, L) -> (N, G, Og, L)
  y = y.reshape({g.N, g.C_out, g.H_out, g.W_out});
  if (b.defined()) y = y + b.value().reshape({g.C_out, 1, 1});      // one bias per output channel
  std::vector<Variable> inputs{x, w};
  if (b.defined()) inputs.push_back(b);
  return make_result("conv2d", y, inputs, [cols, wg, g](const Tensor& dy, Node& n) {
    const Tensor d = dy.reshape({g.N, g.groups, g.group_out(), g.L()});  // (N, G, Og, L)
    // dx: every column's gradient W^T d, added back onto the pixels it was copied from.
    if (n.needs_grad(0)) n.add_grad(0, col2im(matmul(wg, d, /*trans_a=*/true, false), g));  // (N, G, K, L)
    // dW: d cols^T for each image, summed over the images.
    if (n.needs_grad(1))
      n.add_grad(1, sum(matmul(d, cols, false, /*trans_b=*/true), 0).reshape(n.inputs[1].shape()));  // (G, Og, K)
    if (n.inputs.size() > 2 && n.needs_grad(2)) n.add_grad(2, sum(dy, {0, 2, 3}));  // db: over images and positions
  });
}
// [docs:end]

// ================================================================================================
// softmax / log_softmax (kernels and their derivations: tensor/softmax.cpp)

// [docs:softmax]
Variable softmax(const Variable& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "softmax");
  const Tensor y = softmax(x.value(), a);
  return make_result("softmax", y, {x}, [y, a](const Tensor& dout, Node& n) {
    n.add_grad(0, softmax_backward(y, dout, a));  // dx = y (dout - sum(dout y))
  });
}
// [docs:end]

// [docs:scaled_masked_softmax_op]
Variable scaled_masked_softmax(const Variable& x, const Tensor& mask, real scale) {
  const Tensor y = scaled_masked_softmax(x.value(), mask, scale);
  return make_result("scaled_masked_softmax", y, {x}, [y, scale](const Tensor& dout, Node& n) {
    n.add_grad(0, softmax_backward(y, dout, -1, scale));  // dx = scale y (dout - sum(dout y)); 0 where masked
  });
}
// [docs:end]

Variable log_softmax(const Variable& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "log_softmax");
  const Tensor y = log_softmax(x.value(), a);
  return make_result("log_softmax", y, {x}, [y, a](const Tensor& dout, Node& n) {
    n.add_grad(0, log_softmax_backward(y, dout, a));  // dx = dout - exp(y) sum(dout)
  });
}

// ================================================================================================
// cross_entropy

Variable cross_entropy(const Variable& logits, const Tensor& targets, const CrossEntropyOptions& opt) {
  check(logits.dim() >= 1, "cross_entropy: expected logits of shape (..., V), got ", logits.shape());
  const Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  check(targets.shape() == lead, "cross_entropy: expected targets of shape ", lead, " for logits of shape ",
        logits.shape(), " (class axis last), got ", targets.shape());
  const int64_t V = logits.size(-1), N = numel(lead);
  const Tensor x = logits.value().reshape({N, V});
  const Tensor t = targets.reshape({N});
  const CrossEntropyForward f = cross_entropy_forward(x, t, opt.ignore_index, opt.label_smoothing);

  int64_t count = 0;  // targets that count towards the mean
  for (int64_t i = 0; i < N; ++i) count += t.data()[i] != static_cast<real>(opt.ignore_index);

  Tensor out;
  switch (opt.reduction) {
    case Reduction::None: out = f.loss.reshape(lead); break;
    case Reduction::Sum: out = sum(f.loss); break;
    case Reduction::Mean: out = count ? sum(f.loss) / static_cast<real>(count) : scalar(0); break;
  }
  const Tensor lse = f.lse;
  return make_result("cross_entropy", out, {logits}, [x, t, lse, opt, count, N](const Tensor& dout, Node& n) {
    // Per-row loss gradient first (what each row's loss was multiplied by), then the kernel's
    // dlogits = dloss * (softmax - smoothed one-hot).
    Tensor dloss;
    switch (opt.reduction) {
      case Reduction::None: dloss = dout.reshape({N}); break;
      case Reduction::Sum: dloss = full({N}, dout.item()); break;
      case Reduction::Mean: dloss = full({N}, count ? dout.item() / static_cast<real>(count) : 0); break;
    }
    const Tensor dx = cross_entropy_backward(x, t, lse, dloss, opt.ignore_index, opt.label_smoothing);
    n.add_grad(0, dx.reshape(n.inputs[0].shape()));
  });
}

// ================================================================================================
// dropout

Variable dropout(const Variable& x, real p, bool training) {
  check(p >= 0 && p <= 1, "dropout: expected a probability p in [0, 1], got ", p);
  if (!training || p == 0) return x;
  // out = x * mask, mask = [u >= p] / (1 - p), u ~ U[0, 1): kept elements are scaled so
  // E[out] = x. Backward needs only which elements were kept, one byte each (a float mask
  // would hold four per element until backward: a Transformer keeps several of them per layer).
  const real scale = p < 1 ? 1 / (1 - p) : 0;
  const Tensor u = rand(x.shape());  // drawn in order from the default generator
  const int64_t n = u.numel();
  auto keep = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(n));
  Tensor out = Tensor::empty(x.shape());
  const real *pu = u.data(), *px = x.value().data();
  uint8_t* pk = keep->data();
  real* po = out.data();
  parallel_for(0, n, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
    // (__restrict and local copies: a byte store could otherwise alias anything, and the loop
    // would not vectorise)
    const real *__restrict u_ = pu, *__restrict x_ = px;
    uint8_t* __restrict k_ = pk;
    real* __restrict o_ = po;
    const real p_ = p, scale_ = scale;  // locals, not loads through the captured references
    for (int64_t i = i0; i < i1; ++i) o_[i] = x_[i] * (u_[i] >= p_ ? scale_ : real(0));
    for (int64_t i = i0; i < i1; ++i) k_[i] = u_[i] >= p_;
  });
  return make_result("dropout", out, {x}, [keep, scale](const Tensor& dout, Node& nd) {
    Tensor dx = Tensor::empty(dout.shape());  // dx = dout * mask
    const real* pd = dout.data();
    const uint8_t* pk = keep->data();
    real* pdx = dx.data();
    parallel_for(0, dout.numel(), kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      const real* __restrict d_ = pd;
      const uint8_t* __restrict k_ = pk;
      real* __restrict dx_ = pdx;
      const real scale_ = scale;
      for (int64_t i = i0; i < i1; ++i) dx_[i] = d_[i] * (scale_ * static_cast<real>(k_[i]));  // k = 0 or 1
    });
    nd.add_grad(0, dx);
  });
}

// ================================================================================================
// Fused layers (kernels and their derivations: tensor/fused.cpp)

Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, real eps) {
  const Tensor w = weight.defined() ? weight.value() : Tensor();
  LayerNormForward f = layer_norm_forward(x.value(), w, bias.defined() ? bias.value() : Tensor(), eps);
  std::vector<Variable> inputs{x};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  const bool has_w = weight.defined(), has_b = bias.defined();
  const Tensor x_hat = f.x_hat, rstd = f.rstd;
  return make_result("layer_norm", f.y, std::move(inputs), [x_hat, rstd, w, has_w, has_b](const Tensor& dy, Node& n) {
    const LayerNormBackward b = layer_norm_backward(dy, x_hat, rstd, w);
    if (n.needs_grad(0)) n.add_grad(0, b.dx);
    if (has_w && n.needs_grad(1)) n.add_grad(1, b.dweight);
    if (has_b) {
      const size_t i = has_w ? 2 : 1;
      if (n.needs_grad(i)) n.add_grad(i, has_w ? b.dbias : sum(dy.reshape({-1, dy.size(-1)}), 0));
    }
  });
}

Variable lstm_cell(const Variable& gates, const Variable& c) {
  LSTMCellForward f = lstm_cell_forward(gates.value(), c.value());
  const Tensor act = f.act, hc = f.hc, cv = c.value();
  return make_result("lstm_cell", f.hc, {gates, c}, [act, hc, cv](const Tensor& dhc, Node& n) {
    const LSTMCellBackward b = lstm_cell_backward(dhc, act, hc, cv);
    if (n.needs_grad(0)) n.add_grad(0, b.dgates);
    if (n.needs_grad(1)) n.add_grad(1, b.dc);
  });
}

// ================================================================================================
// Pooling (kernels and their backward: tensor/pool.cpp)

// [docs:pool_ops]
Variable max_pool2d(const Variable& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape(), o.kernel_h, o.kernel_w, o.stride_h, o.stride_w, o.padding_h,
                                           o.padding_w, "max_pool2d");
  MaxPool2dForward f = max_pool2d_forward(x.value(), g);
  // Backward needs only where each window's winner was: one index per output.
  auto argmax = std::make_shared<const std::vector<int64_t>>(std::move(f.argmax));
  return make_result("max_pool2d", f.y, {x}, [argmax, g](const Tensor& dy, Node& n) {
    n.add_grad(0, max_pool2d_backward(dy, *argmax, g));  // dx[winner] += dy
  });
}

Variable avg_pool2d(const Variable& x, const Pool2dOptions& o) {
  const Pool2dGeometry g = pool2d_geometry(x.shape(), o.kernel_h, o.kernel_w, o.stride_h, o.stride_w, o.padding_h,
                                           o.padding_w, "avg_pool2d");
  return make_result("avg_pool2d", avg_pool2d_forward(x.value(), g), {x}, [g](const Tensor& dy, Node& n) {
    n.add_grad(0, avg_pool2d_backward(dy, g));  // dx[window] += dy / (kH kW)
  });
}
// [docs:end]

// ================================================================================================
// Batch normalisation (kernels and the backward's derivation: tensor/batchnorm.cpp)

// [docs:batch_norm_op]
Variable batch_norm(const Variable& x, Tensor running_mean, Tensor running_var, const Variable& weight,
                    const Variable& bias, bool training, real momentum, real eps) {
  check(x.dim() >= 2 && x.size(1) >= 1, "batch_norm: expected input of shape (N, C, ...), got ", x.shape());
  const int64_t C = x.size(1), M = x.numel() / C;  // M values per channel
  const auto check_channels = [C](const char* what, bool defined, const Shape& shape) {
    check(!defined || shape == Shape{C}, "batch_norm: expected ", what, " of shape [", C, "], got ", shape);
  };
  check_channels("weight", weight.defined(), weight.defined() ? weight.shape() : Shape{});
  check_channels("bias", bias.defined(), bias.defined() ? bias.shape() : Shape{});
  check_channels("running_mean", running_mean.defined(), running_mean.defined() ? running_mean.shape() : Shape{});
  check_channels("running_var", running_var.defined(), running_var.defined() ? running_var.shape() : Shape{});
  check(running_mean.defined() == running_var.defined(),
        "batch_norm: expected running_mean and running_var both defined or both undefined");
  Tensor mu, var;
  if (training) {
    check(M > 1, "batch_norm: expected more than 1 value per channel when training, got input of shape ", x.shape());
    const BatchNormStats st = batch_norm_stats(x.value());
    mu = st.mean, var = st.var;
    if (running_mean.defined()) {  // in place: the caller's buffers see the update
      real *rm = running_mean.data(), *rv = running_var.data();
      const real unbiased = static_cast<real>(M) / static_cast<real>(M - 1);
      for (int64_t c = 0; c < C; ++c) {
        rm[c] = (1 - momentum) * rm[c] + momentum * mu.data()[c];
        rv[c] = (1 - momentum) * rv[c] + momentum * var.data()[c] * unbiased;
      }
    }
  } else {
    check(running_mean.defined(), "batch_norm: expected running_mean and running_var outside training, got none");
    mu = running_mean, var = running_var;
  }
  const Tensor rstd = map(var, [eps](real v) { return 1 / std::sqrt(v + eps); });  // (C)
  const Tensor w = weight.defined() ? weight.value() : Tensor();
  const BatchNormForward f = batch_norm_forward(x.value(), mu, rstd, w, bias.defined() ? bias.value() : Tensor());
  std::vector<Variable> inputs{x};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  const size_t b_at = bias.defined() ? inputs.size() - 1 : 0;  // 0: no bias (input 0 is x)
  const Tensor x_hat = f.x_hat;
  return make_result("batch_norm", f.y, std::move(inputs), [x_hat, rstd, w, training, b_at](const Tensor& dy, Node& n) {
    const BatchNormBackward b = batch_norm_backward(dy, x_hat, rstd, w, /*batch_stats=*/training);
    if (n.needs_grad(0)) n.add_grad(0, b.dx);
    if (w.defined() && n.needs_grad(1)) n.add_grad(1, b.dweight);
    if (b_at && n.needs_grad(b_at)) n.add_grad(b_at, b.dbias);
  });
}
// [docs:end]

}  // namespace seqgrad
