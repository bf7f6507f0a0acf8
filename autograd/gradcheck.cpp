// autograd/gradcheck.cpp - central finite differences against backward().
#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad {
namespace {

// L = sum_i f(x)_i R_i, accumulated in double.
double projected(const Variable& out, const Tensor& R) {
  double total = 0;
  for (int64_t i = 0; i < R.numel(); ++i) total += static_cast<double>(out.value().data()[i]) * R.data()[i];
  return total;
}

}  // namespace

namespace {

// The core of both checks. `leaves` already hold the analytic gradient of L = sum(f * R) in
// .grad; each of their elements is perturbed in place by +-eps, `evaluate` recomputes f, and
// the central difference is compared with the analytic value.
GradcheckResult compare_with_finite_differences(const std::function<Variable()>& evaluate,
                                                const std::vector<Variable>& leaves, const Tensor& R,
                                                const GradcheckOptions& opt) {
  GradcheckResult result;
  double worst_ratio = -1;
  NoGradGuard no_grad;
  for (size_t k = 0; k < leaves.size(); ++k) {
    Variable leaf = leaves[k];
    const Tensor g = leaf.grad().defined() ? leaf.grad().clone() : Tensor();
    real* x = leaf.value().data();
    for (int64_t i = 0; i < leaf.numel(); ++i) {
      const real original = x[i];
      x[i] = static_cast<real>(original + opt.eps);
      const double plus = projected(evaluate(), R);
      x[i] = static_cast<real>(original - opt.eps);
      const double minus = projected(evaluate(), R);
      x[i] = original;
      // Divide by the step actually taken (x +- eps rounded to real), not the nominal one.
      const double step = static_cast<double>(static_cast<real>(original + opt.eps)) -
                          static_cast<double>(static_cast<real>(original - opt.eps));
      const double numeric = (plus - minus) / step;
      const double analytic = g.defined() ? g.data()[i] : 0.0;
      const double err = std::abs(analytic - numeric);
      const double tol = opt.atol + opt.rtol * std::abs(numeric);
      const double ratio = std::isnan(err) ? INFINITY : err / tol;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        result.max_abs_error = err;
        std::ostringstream os;
        os.precision(8);
        os << "input " << k << " element " << unravel_index(i, leaf.shape()) << ": analytic " << analytic
           << ", numeric " << numeric << ", |error| " << err << " vs tolerance " << tol << " (" << kRealName
           << ", eps " << opt.eps << ")";
        result.message = os.str();
      }
      if (!(err <= tol)) result.ok = false;
    }
  }
  if (result.message.empty()) result.message = "no input elements to check";
  return result;
}

// A fixed random projection R in [-1, 1), so one backward of sum(f * R) checks every output.
Tensor projection_like(const Variable& out, uint64_t seed) {
  Generator projection(seed);
  Tensor R = Tensor::empty(out.shape());
  for (int64_t i = 0; i < R.numel(); ++i) R.data()[i] = static_cast<real>(2 * projection.uniform() - 1);
  return R;
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<Variable> vars;
  for (const Tensor& t : inputs) vars.emplace_back(t.clone(), /*requires_grad=*/true);
  return gradcheck_parameters([&] { return fn(vars); }, vars, opt);
}

GradcheckResult gradcheck_parameters(const std::function<Variable()>& fn, const std::vector<Variable>& params,
                                     const GradcheckOptions& opt) {
  // Every evaluation starts from the same random state, so dropout draws the same mask.
  const Generator saved = default_generator();
  auto evaluate = [&] {
    default_generator() = saved;
    return fn();
  };
  for (Variable p : params) p.zero_grad();
  const Variable out = evaluate();
  check(out.requires_grad(), "gradcheck: the function's output does not depend on any input");
  const Tensor R = projection_like(out, opt.seed);
  out.backward(R);
  return compare_with_finite_differences(evaluate, params, R, opt);
}

}  // namespace seqgrad
