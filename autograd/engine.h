// autograd/engine.h - the backward pass: order the graph, run each Node's backward in reverse.
//
// Rules (the same as PyTorch's):
//  - backward() from a one-element Variable seeds its gradient with 1; any other shape needs
//    the gradient given explicitly.
//  - Gradients ACCUMULATE: a second backward adds to .grad; clear with zero_grad().
//  - The graph is freed as the sweep goes (each Node drops its inputs and saved tensors once its
//    backward has run), unless retain_graph is true; under detect_anomaly, at the end of the
//    sweep. A second backward through a freed graph throws (so does one after a backward that
//    threw part-way: the Nodes it had run are freed).
//  - Only leaves (and Variables that called retain_grad()) keep .grad after backward.
// The graph is ordered with an iterative depth-first search, so a chain of 100,000 ops does
// not overflow the stack. Read next: gradcheck.h.
#pragma once

#include <ostream>
#include <string>

#include "autograd/variable.h"

namespace seqgrad {

class BackwardEngine {
 public:
  static void run(const Variable& root, const Tensor& grad, bool retain_graph);
};

// The graph that produced `root`, one Node per line with its shape, children indented:
//   mean [] <- mul [2, 3] <- (x [2, 3] leaf, tanh [2, 3] <- ...)
std::string graph_to_string(const Variable& root);
void print_graph(const Variable& root, std::ostream& os);
void print_graph(const Variable& root);  // to std::cout

}  // namespace seqgrad
