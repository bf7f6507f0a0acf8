// autograd/hooks.h - how add-ons watch the core without the core knowing them.
//
// make_result calls `after_forward` with every op's output, and the backward engine calls
// `after_backward` after every Node has run, when they are set. Anomaly mode (anomaly.h) sets
// them while it is on; the core includes nothing of it, so reading variable.cpp and engine.cpp
// never leads into the add-ons. The hooks are per thread, like the gradient mode. What this is
// not: PyTorch's per-tensor hooks (register_hook); these see every op of this thread.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace seqgrad {

class Variable;
class Edge;

struct AutogradHooks {
  // After an op computes `value` from `inputs` (and before it is recorded). May throw.
  void (*after_forward)(const char* op, const Tensor& value, const std::vector<Variable>& inputs) = nullptr;
  // After the backward of the Node that made `v`, in a backward() started from `root` (both as
  // the graph keeps them: Edges, variable.h). May throw. While it is set, the engine frees no
  // Node before the sweep ends, so that the hook can still walk the graph from the root
  // (anomaly mode reports the path to a bad gradient).
  void (*after_backward)(const Edge& root, const Edge& v) = nullptr;
};

// This thread's hooks (all unset by default).
AutogradHooks& autograd_hooks();

}  // namespace seqgrad
