// autograd/ops_math.cpp - elementwise arithmetic and functions, forward and backward together.
//
// Pattern of every op: compute the value with tensor/ kernels, then make_result(...) with a
// backward lambda that receives dout = d(loss)/d(output) and adds d(loss)/d(input) for each
// input. The lambda captures exactly the tensors its formula needs.
#include "autograd/ops.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/elementwise.h"
#include "tensor/isa_loop.h"
#include "tensor/reduce.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

// ================================================================================================
// Binary arithmetic. Broadcasting copies an input along some axes, so the chain rule adds
// the gradient up along those axes: sum_to_shape(g, input shape).

Variable add(const Variable& a, const Variable& b) {
  return make_result("add", a.value() + b.value(), {a, b}, [](const Tensor& dout, Node& n) {
    // out = a + b  =>  da = dout, db = dout
    if (n.needs_grad(0)) n.add_grad(0, sum_to_shape(dout, n.inputs[0].shape()));
    if (n.needs_grad(1)) n.add_grad(1, sum_to_shape(dout, n.inputs[1].shape()));
  });
}

Variable sub(const Variable& a, const Variable& b) {
  return make_result("sub", a.value() - b.value(), {a, b}, [](const Tensor& dout, Node& n) {
    // out = a - b  =>  da = dout, db = -dout
    if (n.needs_grad(0)) n.add_grad(0, sum_to_shape(dout, n.inputs[0].shape()));
    if (n.needs_grad(1)) n.add_grad(1, sum_to_shape(-dout, n.inputs[1].shape()));
  });
}

// [docs:mul]
Variable mul(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  return make_result("mul", av * bv, {a, b}, [av, bv](const Tensor& dout, Node& n) {
    // out = a * b  =>  da = dout * b, db = dout * a
    if (n.needs_grad(0)) n.add_grad(0, sum_to_shape(dout * bv, av.shape()));
    if (n.needs_grad(1)) n.add_grad(1, sum_to_shape(dout * av, bv.shape()));
  });
}
// [docs:end]

Variable div(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  const Tensor out = av / bv;
  return make_result("div", out, {a, b}, [bv, out, av](const Tensor& dout, Node& n) {
    // out = a / b  =>  da = dout / b, db = -dout * a / b^2 = -dout * out / b
    if (n.needs_grad(0)) n.add_grad(0, sum_to_shape(dout / bv, av.shape()));
    if (n.needs_grad(1)) n.add_grad(1, sum_to_shape(-(dout * out) / bv, bv.shape()));
  });
}

Variable neg(const Variable& x) {
  return make_result("neg", -x.value(), {x}, [](const Tensor& dout, Node& n) {
    n.add_grad(0, -dout);  // out = -x  =>  dx = -dout
  });
}

Variable operator+(const Variable& a, const Variable& b) { return add(a, b); }
Variable operator-(const Variable& a, const Variable& b) { return sub(a, b); }
Variable operator*(const Variable& a, const Variable& b) { return mul(a, b); }
Variable operator/(const Variable& a, const Variable& b) { return div(a, b); }
Variable operator-(const Variable& x) { return neg(x); }

// ================================================================================================
// Arithmetic with a constant s (no gradient for s)

Variable operator+(const Variable& a, real s) {
  return make_result("add_scalar", a.value() + s, {a}, [](const Tensor& dout, Node& n) {
    n.add_grad(0, dout);  // out = a + s  =>  da = dout
  });
}

Variable operator-(const Variable& a, real s) { return a + (-s); }

Variable operator*(const Variable& a, real s) {
  return make_result("mul_scalar", a.value() * s, {a}, [s](const Tensor& dout, Node& n) {
    n.add_grad(0, dout * s);  // out = a * s  =>  da = s * dout
  });
}

Variable operator/(const Variable& a, real s) { return a * (1 / s); }
Variable operator+(real s, const Variable& a) { return a + s; }
Variable operator-(real s, const Variable& a) { return (-a) + s; }
Variable operator*(real s, const Variable& a) { return a * s; }

Variable operator/(real s, const Variable& a) {
  const Tensor av = a.value(), out = s / av;
  return make_result("rdiv_scalar", out, {a}, [av, out](const Tensor& dout, Node& n) {
    // out = s / a  =>  da = -s / a^2 * dout = -out / a * dout
    n.add_grad(0, -(dout * out) / av);
  });
}

// ================================================================================================
// Elementwise functions. Where the derivative is easiest in terms of the output y (exp, tanh,
// sigmoid, sqrt) the backward captures y; otherwise it captures x.

Variable pow(const Variable& x, real p) {
  const Tensor xv = x.value();
  return make_result("pow", pow(xv, p), {x}, [xv, p](const Tensor& dout, Node& n) {
    // y = x^p  =>  dy/dx = p x^(p-1)
    n.add_grad(0, map2(xv, dout, [p](real xi, real g) { return g * p * std::pow(xi, p - 1); }));
  });
}

Variable exp(const Variable& x) {
  const Tensor y = exp(x.value());
  return make_result("exp", y, {x}, [y](const Tensor& dout, Node& n) {
    n.add_grad(0, dout * y);  // y = e^x  =>  dy/dx = e^x = y
  });
}

Variable log(const Variable& x) {
  const Tensor xv = x.value();
  return make_result("log", log(xv), {x}, [xv](const Tensor& dout, Node& n) {
    n.add_grad(0, dout / xv);  // y = ln x  =>  dy/dx = 1 / x
  });
}

Variable sqrt(const Variable& x) {
  const Tensor y = sqrt(x.value());
  return make_result("sqrt", y, {x}, [y](const Tensor& dout, Node& n) {
    // y = x^(1/2)  =>  dy/dx = 1 / (2 sqrt(x)) = 1 / (2y)
    n.add_grad(0, map2(y, dout, [](real yi, real g) { return g / (2 * yi); }));
  });
}

Variable abs(const Variable& x) {
  const Tensor xv = x.value();
  return make_result("abs", abs(xv), {x}, [xv](const Tensor& dout, Node& n) {
    // y = |x|  =>  dy/dx = sign(x)  (0 at x = 0, as PyTorch)
    n.add_grad(0, map2(xv, dout, [](real xi, real g) { return xi > 0 ? g : xi < 0 ? -g : real(0); }));
  });
}

// [docs:tanh]
Variable tanh(const Variable& x) {
  const Tensor y = tanh(x.value());
  return make_result("tanh", y, {x}, [y](const Tensor& dout, Node& n) {
    // y = tanh(x)  =>  dy/dx = 1 - tanh(x)^2 = 1 - y^2
    n.add_grad(0, map2(y, dout, [](real yi, real g) { return g * (1 - yi * yi); }));
  });
}
// [docs:end]

Variable sigmoid(const Variable& x) {
  const Tensor y = sigmoid(x.value());
  return make_result("sigmoid", y, {x}, [y](const Tensor& dout, Node& n) {
    // y = 1 / (1 + e^-x)  =>  dy/dx = e^-x / (1 + e^-x)^2 = y (1 - y)
    n.add_grad(0, map2(y, dout, [](real yi, real g) { return g * yi * (1 - yi); }));
  });
}

namespace {

// relu's two loops over n elements, each compiled per instruction set (for_isa). The pointers
// are __restrict: a byte store could otherwise alias anything, and the loops would stay scalar.
// Each element is loaded before the select, so the select has no branch to vectorise around.
SEQGRAD_INLINE_LOOP void relu_forward_loop(int64_t n, const real* __restrict x, real* __restrict y, uint8_t* __restrict positive) {
  for (int64_t i = 0; i < n; ++i) {
    const real v = x[i];
    y[i] = v > 0 ? v : real(0);
    positive[i] = v > 0;
  }
}

SEQGRAD_INLINE_LOOP void relu_backward_loop(int64_t n, const real* __restrict dy, const uint8_t* __restrict positive,
                        real* __restrict dx) {
  for (int64_t i = 0; i < n; ++i) {
    const real g = dy[i];
    dx[i] = positive[i] ? g : real(0);
  }
}

}  // namespace

Variable relu(const Variable& x) {
  // Backward needs only where x > 0: one byte per element, not x itself (four bytes each). In
  // a Transformer's feed-forward block x is the largest activation, (B, T, 4C) per layer, and
  // nothing else keeps it.
  const Tensor xv = x.value();
  const int64_t count = xv.numel();
  auto positive = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(count));
  Tensor y = Tensor::empty(xv.shape());
  const real* px = xv.data();
  uint8_t* pp = positive->data();
  real* py = y.data();
  parallel_for(0, count, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
    for_isa([&] { relu_forward_loop(i1 - i0, px + i0, py + i0, pp + i0); });
  });
  return make_result("relu", y, {x}, [positive](const Tensor& dout, Node& n) {
    // y = max(x, 0)  =>  dy/dx = 1 where x > 0, else 0
    Tensor dx = Tensor::empty(dout.shape());
    const real* pd = dout.data();
    const uint8_t* pp = positive->data();
    real* pdx = dx.data();
    parallel_for(0, dout.numel(), kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for_isa([&] { relu_backward_loop(i1 - i0, pd + i0, pp + i0, pdx + i0); });
    });
    n.add_grad(0, dx);
  });
}

Variable gelu(const Variable& x) {
  const Tensor xv = x.value();
  return make_result("gelu", gelu(xv), {x}, [xv](const Tensor& dout, Node& n) {
    // y = x Phi(x)  =>  dy/dx = Phi(x) + x phi(x)
    n.add_grad(0, map2(xv, dout, [](real xi, real g) { return g * gelu_grad(xi); }));
  });
}

}  // namespace seqgrad
