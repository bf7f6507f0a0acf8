// tests/autograd/test_engine.cpp - the backward engine's contract: accumulation, reuse, freed
// graphs, deep graphs, NoGradGuard, print_graph, and its error messages.
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "autograd/hooks.h"
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("an interior node used twice: a = 1; b = a + a; c = b + b gives dc/da = 4") {
  Variable a(scalar(1), true);
  Variable b = a + a;
  Variable c = b + b;
  c.backward();
  CHECK(a.grad().item() == 4);
  CHECK(c.item() == 4);
}

TEST_CASE("backward accumulates into .grad until zero_grad") {
  Variable x(from_vector({1, 2, 3}), true);
  Variable y = sum(x * x);  // dy/dx = 2x
  y.backward({}, /*retain_graph=*/true);
  CHECK(x.grad().to_vector() == std::vector<real>{2, 4, 6});
  y.backward();  // second pass through the retained graph adds
  CHECK(x.grad().to_vector() == std::vector<real>{4, 8, 12});
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  sum(x * x).backward();  // a new graph
  CHECK(x.grad().to_vector() == std::vector<real>{2, 4, 6});
}

TEST_CASE("a second backward through a freed graph throws a clear error") {
  Variable x(from_vector({1, 2}), true);
  Variable y = sum(tanh(x));
  y.backward();
  CHECK_THROWS_WITH_AS(y.backward(),
                       "backward: the graph through 'sum' was already freed by an earlier backward(); "
                       "pass retain_graph=true to the first backward() to run backward twice",
                       std::runtime_error);
}

TEST_CASE("backward frees every node of the graph, also under detect_anomaly; retain_graph keeps them") {
  for (int mode = 0; mode < 3; ++mode) {  // 0: plain, 1: detect_anomaly, 2: retain_graph
    CAPTURE(mode);
    DetectAnomalyGuard anomaly(mode == 1);
    Variable x(from_vector({1, 2}), true);
    Variable t = tanh(x), u = t * t;
    Variable y = sum(u + t);
    y.backward(Tensor(), /*retain_graph=*/mode == 2);
    for (const Variable& v : {t, u, y}) {
      CHECK(v.node()->freed == (mode != 2));
      CHECK(v.node()->inputs.empty() == (mode != 2));
    }
    if (mode == 1) CHECK_THROWS_AS(y.backward(), std::runtime_error);
  }
}

TEST_CASE("an intermediate value that no backward saved is freed during the forward pass") {
  Variable x(from_vector({1, 2, 3}), true);
  Tensor sum_value;
  Variable y;
  {
    const Variable s = x + x;  // add's backward needs nothing of its inputs or its output
    sum_value = s.value();
    y = sum(tanh(s));  // tanh's backward keeps its output, not s
  }
  CHECK(sum_value.is_unique());  // this test's copy is the last one: the graph kept none
  y.backward();  // the gradient still reaches x through s's Edge: 2 (1 - tanh(2x)^2)
  for (int64_t i = 0; i < 3; ++i) {
    const double t = std::tanh(2.0 * (i + 1));
    CHECK(x.grad().data()[i] == doctest::Approx(2 * (1 - t * t)).epsilon(1e-6));
  }
}

TEST_CASE("backward on a non-scalar needs an explicit gradient") {
  Variable x(ones({2, 3}), true);
  Variable y = x * real(2);
  CHECK_THROWS_WITH_AS(y.backward(),
                       "backward: expected a scalar output (one element) when no gradient is given, got shape "
                       "[2, 3]; reduce it first (sum, mean) or pass d(loss)/d(output)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(y.backward(ones({3, 2})), "backward: expected a gradient of shape [2, 3] (the output's), got [3, 2]",
                       std::invalid_argument);
  y.backward(full({2, 3}, 0.5));
  CHECK(x.grad().to_vector() == std::vector<real>(6, 1));
}

TEST_CASE("backward on something that does not require grad") {
  Variable x(ones({2}));
  CHECK_THROWS_WITH_AS(sum(x).backward(),
                       "backward: this Variable (made by 'leaf') does not require grad, so there is nothing to "
                       "differentiate; did you forget requires_grad=true on the parameters, or run the forward "
                       "pass under NoGradGuard?",
                       std::invalid_argument);
}

TEST_CASE("a backward that returns the wrong shape is caught where gradients meet") {
  Variable x(ones({2, 3}), true);
  Variable bad = make_result("bad_op", x.value().clone(), {x}, [](const Tensor& dout, Node& n) {
    n.add_grad(0, sum(dout, 0));  // forgot to keep the shape
  });
  CHECK_THROWS_WITH_AS(sum(bad).backward(),
                       "bad_op: gradient for input 0 has the wrong shape; expected [2, 3], got [3]",
                       std::invalid_argument);
}

namespace {

// y = 2 x, whose backward writes its gradient through add_grad_into and records each call.
struct IntoCall {
  const real* out;
  bool accumulate;
};
Variable twice_into(const Variable& x, std::vector<IntoCall>* calls) {
  return make_result("twice_into", x.value() * real(2), {x}, [calls](const Tensor& dout, Node& n) {
    n.add_grad_into(0, [&](Tensor& out, bool accumulate) {
      calls->push_back({out.data(), accumulate});
      for (int64_t i = 0; i < out.numel(); ++i) out.data()[i] = (accumulate ? out.data()[i] : 0) + 2 * dout.data()[i];
    });
  });
}

// y = x, whose backward hands its output's gradient on as it is: x's gradient then shares it.
Variable pass_through(const Variable& x) {
  return make_result("pass_through", x.value().clone(), {x}, [](const Tensor& dout, Node& n) { n.add_grad(0, dout); });
}

}  // namespace

TEST_CASE("add_grad_into: the first gradient is written, later ones are added in place") {
  Variable x(from_vector({1, 2, 3}), true);
  std::vector<IntoCall> calls;
  sum(twice_into(x, &calls) + twice_into(x, &calls)).backward();
  CHECK(x.grad().to_vector() == std::vector<real>{4, 4, 4});
  REQUIRE(calls.size() == 2);
  CHECK_FALSE(calls[0].accumulate);
  CHECK(calls[1].accumulate);
  CHECK(calls[1].out == calls[0].out);              // the same buffer: no temporary
  CHECK(x.grad().data() == calls[0].out);
}

TEST_CASE("add_grad_into: a gradient buffer someone else still sees is not written in place") {
  // x's gradient starts out as y's (pass_through shares it); y keeps it (retain_grad). Adding
  // twice_into's share in place would change y.grad too. (With twice_into first in the sum,
  // the engine runs pass_through's backward first, which is the case to test.)
  Variable x(from_vector({1, 2, 3}), true);
  std::vector<IntoCall> calls;
  Variable y = pass_through(x);
  y.retain_grad();
  sum(twice_into(x, &calls) + y * real(3)).backward();
  CHECK(y.grad().to_vector() == std::vector<real>{3, 3, 3});
  CHECK(x.grad().to_vector() == std::vector<real>{5, 5, 5});
  REQUIRE(calls.size() == 1);
  CHECK_FALSE(calls[0].accumulate);
}

TEST_CASE("add_grad_into: an error in writing the gradient names the op and the input") {
  Variable x(ones({2, 3}), true);
  Variable bad = make_result("bad_into", x.value().clone(), {x}, [](const Tensor& dout, Node& n) {
    n.add_grad_into(0, [&](Tensor& out, bool accumulate) {
      matmul_into(out, dout, ones({3, 2}), false, false, accumulate);  // (2, 2), not x's (2, 3)
    });
  });
  CHECK_THROWS_WITH_AS(sum(bad).backward(),
                       "bad_into: gradient for input 0: matmul_into: expected out of shape [2, 2], got [2, 3]",
                       std::invalid_argument);
}

TEST_CASE("a chain of 100,000 ops: no stack overflow in backward or in destruction") {
  Variable x(scalar(1), true);
  {
    Variable y = x;
    for (int i = 0; i < 100000; ++i) y = y * real(1.00001);
    y.backward();
    CHECK(x.grad().item() == doctest::Approx(std::pow(1.00001, 100000)).epsilon(1e-3));
  }
  {
    // Never backpropagated: the whole graph is destroyed when y goes out of scope.
    Variable y = x;
    for (int i = 0; i < 100000; ++i) y = tanh(y);
    CHECK(y.op() == "tanh");
  }
}

TEST_CASE("only leaves keep .grad, unless retain_grad() was called") {
  Variable x(from_vector({1, 2}), true);
  Variable h = x * real(3);
  Variable k = h * real(2);
  k.retain_grad();
  sum(k).backward();
  CHECK_FALSE(h.grad().defined());
  CHECK(k.grad().to_vector() == std::vector<real>{1, 1});
  CHECK(x.grad().to_vector() == std::vector<real>{6, 6});
}

TEST_CASE("NoGradGuard turns recording off; detach cuts the graph") {
  Variable x(ones({2}), true);
  {
    NoGradGuard guard;
    CHECK_FALSE(grad_enabled());
    Variable y = x * real(2);
    CHECK_FALSE(y.requires_grad());
    CHECK(y.is_leaf());
  }
  CHECK(grad_enabled());
  Variable z = (x * real(2)).detach();
  CHECK(z.is_leaf());
  CHECK_FALSE(z.requires_grad());
  CHECK_THROWS_WITH_AS((x * real(2)).set_requires_grad(false),
                       "set_requires_grad: only leaf Variables can change requires_grad; this one was made by "
                       "'mul_scalar' (use detach() to get a leaf)",
                       std::invalid_argument);
}

TEST_CASE("gradients flow only to inputs that require them") {
  Variable w(ones({2}), true), c(ones({2}), false);
  sum(w * c).backward();
  CHECK(w.grad().defined());
  CHECK_FALSE(c.grad().defined());
}

TEST_CASE("print_graph shows ops, shapes, names and shared nodes") {
  Variable x = Variable(ones({2, 3}), true).set_name("x");
  Variable t = tanh(x);
  Variable loss = mean(t * t);
  CHECK(graph_to_string(loss) ==
        "mean [] #1\n"
        "  <- mul [2, 3] #2\n"
        "    <- tanh [2, 3] #3\n"
        "      <- leaf 'x' [2, 3] requires_grad\n"
        "    <- tanh [2, 3] (#3, shown above)\n");
}

TEST_CASE("ops on constants record nothing") {
  Variable a(ones({2})), b(ones({2}));
  Variable c = a + b;
  CHECK(c.is_leaf());
  CHECK(c.op() == "leaf");
}

// ================================================================================================
// Hooks (autograd/hooks.h): how anomaly mode watches the core

namespace {
std::vector<std::string> forward_ops;
int backward_calls = 0;
void record_forward(const char* op, const Tensor&, const std::vector<Variable>&) { forward_ops.push_back(op); }
void count_backward(const Edge&, const Edge&) { ++backward_calls; }
}  // namespace

TEST_CASE("autograd hooks see every op's value and every Node's backward, on this thread only") {
  forward_ops.clear();
  backward_calls = 0;
  Variable x(ones({2, 2}), /*requires_grad=*/true);
  {
    AutogradHooks& hooks = autograd_hooks();
    const AutogradHooks before = hooks;
    hooks.after_forward = record_forward;
    hooks.after_backward = count_backward;
    Variable y = sum(mul(x, x));
    y.backward();
    std::vector<std::string> other_thread_ops;
    std::thread([&] { other_thread_ops.push_back(autograd_hooks().after_forward ? "set" : "unset"); }).join();
    hooks = before;
    CHECK(other_thread_ops == std::vector<std::string>{"unset"});
  }
  CHECK(forward_ops == std::vector<std::string>{"mul", "sum"});
  CHECK(backward_calls == 2);  // the Nodes of sum and mul
  Variable z = sum(x);         // unset again: nothing recorded
  CHECK(forward_ops.size() == 2);
}
