// examples/08_extending - adding to seqgrad from outside: a new op and a new layer.
//
// New since 07: nothing in the library changes. This file defines a differentiable op,
// softplus, with its backward beside its forward, and a layer, Highway, as a Module with named
// parameters; it checks both the way the library's own tests do (values, shapes, gradcheck),
// then trains a 20-layer network of highway layers next to a plain 20-layer network on the
// spirals of example 02. docs/12-extending.md walks through it step by step.
//   make && build/examples/08_extending
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "examples/common/args.h"
#include "seqgrad.h"

using namespace seqgrad;

// ===============================================================================================
// A new op: softplus(x) = log(1 + e^x), a smooth ReLU

// [docs:softplus]
// y = log(1 + e^x), computed as max(x, 0) + log(1 + e^-|x|) so e^x never overflows.
// dy/dx = e^x / (1 + e^x) = sigmoid(x).   x (any shape) -> y (same shape)
Variable softplus(const Variable& x) {
  const Tensor xv = x.value();
  const Tensor y = map(xv, [](real v) { return std::max(v, real(0)) + std::log1p(std::exp(-std::abs(v))); });
  return make_result("softplus", y, {x}, [xv](const Tensor& dout, Node& n) {
    // y = log(1 + e^x)  =>  dx = dout * sigmoid(x)
    n.add_grad(0, map2(xv, dout, [](real v, real g) { return g * sigmoid(v); }));
  });
}
// [docs:end]

// ===============================================================================================
// A new layer: Highway (Srivastava et al., 2015)

// [docs:highway]
// y = t * softplus(W_h x + b_h) + (1 - t) * x,   t = sigmoid(W_t x + b_t)      x, y (..., C)
// The gate t decides, per feature, how much of the transformed value to take and how much of
// the input to carry through unchanged. b_t starts negative, so a new layer starts close to
// the identity and a deep stack of them still passes gradients back (like a residual).
class Highway : public nn::Module {
 public:
  explicit Highway(int64_t size, real gate_bias = -2) : size(size) {
    check(size > 0, "Highway: expected a positive size, got ", size);
    transform = register_module("transform", std::make_shared<nn::Linear>(size, size));  // W_h, b_h
    gate = register_module("gate", std::make_shared<nn::Linear>(size, size));            // W_t, b_t
    gate->bias.value().fill_(gate_bias);
  }
  std::string name() const override { return "Highway"; }
  std::string extra_repr() const override { return cat("size=", size); }

  Variable forward(const Variable& x) override {
    check(x.dim() >= 1 && x.size(-1) == size, "Highway: expected input with ", size,
          " features (last axis), got shape ", x.shape());
    Variable t = sigmoid(gate->forward(x));                  // (..., C)
    return t * softplus(transform->forward(x)) + (1 - t) * x;  // (..., C)
  }

  int64_t size;
  std::shared_ptr<nn::Linear> transform, gate;
};
// [docs:end]

// ===============================================================================================
// Checks, as the library's tests make them

// [docs:checks]
bool check_softplus() {
  manual_seed(1);
  // Values: the stable formula equals log(1 + e^x) where the naive one does not overflow,
  // and stays finite where it does.
  const Tensor x = from_vector({-30, -1, 0, 1, 30, 100});
  const Tensor naive = log(1 + exp(x));
  const Tensor y = softplus(Variable(x)).value();
  bool ok = std::abs(y.at({4}) - naive.at({4})) < 1e-5 && std::abs(y.at({0}) - naive.at({0})) < 1e-6 &&
            std::isfinite(y.at({5})) && std::abs(y.at({5}) - 100) < 1e-5;
  // Gradients: central differences against backward, on a (3, 4) input.
  const GradcheckResult r = gradcheck([](const std::vector<Variable>& v) { return softplus(v[0]); }, {randn({3, 4})});
  ok = ok && r.ok;
  std::printf("softplus: values %s, gradcheck %s (worst |error| below 1e%d)\n", ok ? "match" : "DIFFER",
              r.ok ? "passed" : "FAILED", static_cast<int>(std::ceil(std::log10(r.max_abs_error + 1e-12))));
  return ok;
}

bool check_highway() {
  manual_seed(2);
  Highway layer(5);
  // Shapes: any leading axes pass through.
  const bool shapes = layer.forward(Variable(randn({2, 3, 5}))).shape() == Shape{2, 3, 5} &&
                      layer.forward(Variable(randn({4, 5}))).shape() == Shape{4, 5};
  // Names: what a checkpoint would store.
  std::string names;
  for (const auto& [name, p] : layer.named_parameters()) names += (names.empty() ? "" : " ") + name;
  // Gradients with respect to the input and to every parameter.
  const Variable x(randn({3, 5}));
  const GradcheckResult rx =
      gradcheck([&layer](const std::vector<Variable>& v) { return layer.forward(v[0]); }, {x.value()});
  const GradcheckResult rp = gradcheck_parameters([&] { return layer.forward(x); }, layer.parameters());
  std::printf("highway: %s, output shapes %s, gradcheck input %s, parameters %s\n", names.c_str(),
              shapes ? "right" : "WRONG", rx.ok ? "passed" : "FAILED", rp.ok ? "passed" : "FAILED");
  return shapes && rx.ok && rp.ok;
}
// [docs:end]

// ===============================================================================================
// Does it learn? 20 layers deep, with and without highways

// [docs:learns]
// The spirals of example 02; full-batch Adam; accuracy on a second draw of the points.
double train_spirals(nn::Sequential& model, int64_t steps) {
  const data::Points2D train = data::make_spirals(100, 3, real(0.04), /*seed=*/1);
  const data::Points2D test = data::make_spirals(100, 3, real(0.04), /*seed=*/2);
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.01)));
  for (int64_t step = 0; step < steps; ++step) {
    Variable loss = nn::cross_entropy(model.forward(Variable(train.x)), train.labels);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  NoGradGuard no_grad;
  const Tensor predicted = argmax(model.forward(Variable(test.x)).value(), -1);
  return mean(eq(predicted, test.labels)).item();
}

// 2 -> C, then `depth` layers of width C, then C -> 3 classes.
nn::Sequential deep_model(int64_t depth, int64_t C, bool highway) {
  nn::Sequential model;
  model.push_back(std::make_shared<nn::Linear>(2, C));
  for (int64_t i = 0; i < depth; ++i) {
    if (highway) {
      model.push_back(std::make_shared<Highway>(C));
    } else {
      model.push_back(std::make_shared<nn::Linear>(C, C));
      model.push_back(std::make_shared<nn::Sigmoid>());
    }
  }
  model.push_back(std::make_shared<nn::Linear>(C, 3));
  return model;
}
// [docs:end]

int run() {
  const bool checks = check_softplus() && check_highway();

  const int64_t depth = 20, width = 16, steps = 300;
  std::printf("\ntraining %lld layers of width %lld on spirals, %lld steps of Adam:\n", static_cast<long long>(depth),
              static_cast<long long>(width), static_cast<long long>(steps));
  manual_seed(3);
  nn::Sequential plain = deep_model(depth, width, /*highway=*/false);
  manual_seed(3);
  nn::Sequential highway = deep_model(depth, width, /*highway=*/true);
  std::printf("  plain (Linear + Sigmoid)  test accuracy %.2f\n", train_spirals(plain, steps));
  std::printf("  highway                   test accuracy %.2f\n", train_spirals(highway, steps));
  return checks ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    const cli::Args args("08_extending", "08_extending   (no flags)", {}, argc, argv);  // --help; no stray words
    return run();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
