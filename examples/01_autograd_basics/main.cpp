// examples/01_autograd_basics - reverse-mode automatic differentiation, by hand and by seqgrad.
//
// The first lesson: build a small expression out of Variables, call backward(), and compare
// every gradient with the one derived on paper. Part 1 is a scalar expression; part 2 a
// one-layer tanh network on a (2, 3) batch. Nothing here is learned yet: that is example 02.
//   make && build/examples/01_autograd_basics
#include <cmath>
#include <iostream>

#include "examples/common/args.h"
#include "seqgrad.h"

using namespace seqgrad;

int run() {
  // ==============================================================================================
  // Part 1: a scalar expression.  L = (a * b + c) * f
  std::cout << "Part 1: L = (a * b + c) * f  with a = 2, b = -3, c = 10, f = -2\n\n";
  // [docs:part1]
  Variable a(scalar(2), true), b(scalar(-3), true), c(scalar(10), true), f(scalar(-2), true);
  a.set_name("a");
  b.set_name("b");
  c.set_name("c");
  f.set_name("f");
  Variable e = a * b;  // -6
  Variable d = e + c;  //  4
  Variable L = d * f;  // -8

  std::cout << "The graph the forward pass recorded (each op's inputs indented below it):\n";
  print_graph(L);
  L.backward();  // walks the graph from L back to the leaves, then frees it
  // [docs:end]

  // On paper, by the chain rule, starting from dL/dL = 1:
  //   dL/df = d = 4          dL/dd = f = -2
  //   dL/dc = dL/dd * 1 = -2
  //   dL/da = dL/dd * b = 6  dL/db = dL/dd * a = -4
  std::cout << "\nL = " << L.item() << "\n";
  std::cout << "          autograd   by hand\n";
  const struct {
    const char* name;
    const Variable& v;
    double by_hand;
  } rows[] = {{"dL/da", a, 6}, {"dL/db", b, -4}, {"dL/dc", c, -2}, {"dL/df", f, 4}};
  for (const auto& r : rows)
    std::cout << "  " << r.name << "   " << r.v.grad().item() << "\t     " << r.by_hand << "\n";

  // ==============================================================================================
  // Part 2: a small tensor expression.  y = tanh(x W),  loss = mean(y^2)
  //   x (2, 3) is data, W (3, 2) a parameter.
  std::cout << "\nPart 2: loss = mean(tanh(x W)^2),  x (2, 3), W (3, 2)\n\n";
  // [docs:part2]
  const Tensor x = from_vector({1, 2, 3, -1, 0, 1}, {2, 3});
  Variable W(from_vector({0.1f, -0.2f, 0.3f, 0.1f, -0.1f, 0.2f}, {3, 2}), true);
  W.set_name("W");
  Variable y = tanh(matmul(Variable(x), W));  // (2, 2)
  Variable loss = mean(y * y);
  loss.backward();

  // By hand, backwards through each line:
  //   loss = mean(y^2)      =>  dloss/dy = 2 y / 4               (2, 2)
  //   y = tanh(z)           =>  dloss/dz = dloss/dy * (1 - y^2)   (2, 2)
  //   z = x W               =>  dloss/dW = x^T dloss/dz           (3, 2)
  const Tensor yv = y.value();
  const Tensor dz = (yv * real(2) / real(4)) * (real(1) - yv * yv);
  const Tensor dW_by_hand = matmul(x, dz, /*trans_a=*/true);
  // [docs:end]
  std::cout << "loss          = " << loss.item() << "\n";
  std::cout << "dloss/dW      = " << W.grad() << "\n";
  std::cout << "by hand       = " << dW_by_hand << "\n";
  std::cout << "largest |difference| = " << max(abs(W.grad() - dW_by_hand)).item() << "\n";

  // gradcheck does the comparison against finite differences, for any function:
  const GradcheckResult r = gradcheck(
      [&x](const std::vector<Variable>& v) { return mean(pow(tanh(matmul(Variable(x), v[0])), 2)); }, {W.value()});
  std::cout << "\ngradcheck " << (r.ok ? "passed" : "FAILED") << "; worst element: " << r.message << "\n";
  return r.ok ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    const cli::Args args("01_autograd_basics", "01_autograd_basics   (no flags)", {}, argc, argv);  // --help; no stray words
    return run();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
