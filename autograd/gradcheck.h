// autograd/gradcheck.h - check a backward pass against finite differences.
//
// For a function f of some tensors, gradcheck compares the gradient that backward() computes
// with the central difference (L(x + eps) - L(x - eps)) / 2 eps for every input element, where
// L = sum(f(x) * R) for a fixed random R (one backward then checks the full Jacobian-vector
// product). It reports the worst element. The default tolerances depend on the precision:
// in float32 they only catch gross errors, so the gradient tests are built a second time in
// float64 (make test does both), where a backward that is off by 1% fails.
//   auto r = gradcheck([](const std::vector<Variable>& v) { return tanh(v[0]); }, {randn({3, 4})});
//   CHECK_MESSAGE(r.ok, r.message);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/variable.h"

namespace seqgrad {

struct GradcheckOptions {
  double eps = sizeof(real) == 8 ? 1e-6 : 1e-2;   // finite-difference step
  double atol = sizeof(real) == 8 ? 1e-7 : 1e-2;  // pass if |analytic - numeric| <= atol + rtol |numeric|
  double rtol = sizeof(real) == 8 ? 1e-4 : 1e-2;
  uint64_t seed = 1234;  // for the projection R

  GradcheckOptions& with_eps(double v) { eps = v; return *this; }
  GradcheckOptions& with_atol(double v) { atol = v; return *this; }
  GradcheckOptions& with_rtol(double v) { rtol = v; return *this; }
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;  // the worst element's |analytic - numeric|
  std::string message;       // names the worst element, both values and the tolerance
  explicit operator bool() const { return ok; }
};

using GradcheckFn = std::function<Variable(const std::vector<Variable>&)>;

// Every input is differentiated (pass indices, masks and targets by capture instead). The
// default random generator is restored before each call of fn, so ops that draw random numbers
// (dropout) see the same numbers every time.
GradcheckResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = GradcheckOptions());

// The same check with respect to existing Variables (a layer's parameters), which are
// perturbed in place and restored; fn builds the output from them. Their .grad is overwritten.
//   auto r = gradcheck_parameters([&] { return layer.forward(x); }, layer.parameters());
GradcheckResult gradcheck_parameters(const std::function<Variable()>& fn, const std::vector<Variable>& params,
                                     const GradcheckOptions& options = GradcheckOptions());

}  // namespace seqgrad
