// autograd/engine.cpp - topological order, the reverse sweep, and graph printing.
#include "autograd/engine.h"

#include <iostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autograd/hooks.h"
#include "tensor/check.h"

namespace seqgrad {

void Variable::backward(const Tensor& grad, bool retain_graph) const {
  BackwardEngine::run(*this, grad, retain_graph);
}

namespace {

// [docs:topological_order]
// Post-order depth-first search without recursion: each stack entry remembers which input to
// visit next. Returns an Edge to every Variable that needs a gradient, inputs before the ops
// using them. (Edges, not Variables: holding the order must not keep the values alive.)
std::vector<Edge> topological_order(const Edge& root) {
  std::vector<Edge> order;
  std::unordered_set<const Node*> visited;
  std::vector<std::pair<Edge, size_t>> stack{{root, 0}};
  if (root.node()) visited.insert(root.node().get());
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    const std::shared_ptr<Node>& node = v.node();
    if (node && next < node->inputs.size()) {
      const Edge in = node->inputs[next++];
      if (in.requires_grad() && in.node() && visited.insert(in.node().get()).second) {
        stack.emplace_back(in, 0);  // `v` and `next` may dangle after this; not used again
      } else if (in.requires_grad() && !in.node()) {
        order.push_back(in);  // a leaf: nothing below it (duplicates are harmless)
      }
      continue;
    }
    order.push_back(v);
    stack.pop_back();
  }
  return order;
}
// [docs:end]

}  // namespace

void BackwardEngine::run(const Variable& root, const Tensor& grad, bool retain_graph) {
  check(root.defined(), "backward: called on an undefined Variable");
  check(root.requires_grad(), "backward: this Variable (made by '", root.op(),
        "') does not require grad, so there is nothing to differentiate; did you forget "
        "requires_grad=true on the parameters, or run the forward pass under NoGradGuard?");
  Tensor seed = grad;
  if (!seed.defined()) {
    check(root.numel() == 1, "backward: expected a scalar output (one element) when no gradient is "
          "given, got shape ", root.shape(), "; reduce it first (sum, mean) or pass d(loss)/d(output)");
    seed = ones(root.shape());
  }
  check(seed.shape() == root.shape(), "backward: expected a gradient of shape ", root.shape(),
        " (the output's), got ", seed.shape());

  const Edge root_edge(root);
  const std::vector<Edge> order = topological_order(root_edge);
  for (const Edge& v : order)
    check_state(!v.node() || !v.node()->freed, "backward: the graph through '", v.op(),
                "' was already freed by an earlier backward(); pass retain_graph=true to the first "
                "backward() to run backward twice");

  // The root's gradient enters like any other contribution: it is added.
  Node seed_node{"backward", {root_edge}, nullptr};
  seed_node.add_grad(0, seed);

  // [docs:reverse_sweep]
  // Reverse topological order: every Node runs after all the Nodes that use its output, so
  // its output gradient is complete when it runs.
  const auto check = autograd_hooks().after_backward;  // e.g. anomaly.h: NaN/Inf in a new gradient
  auto free_node = [](Node& node) {
    node.inputs.clear();      // release the inputs...
    node.backward = nullptr;  // ...and the tensors the backward captured
    node.freed = true;
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Edge& v = *it;
    const std::shared_ptr<Node>& node = v.node();
    if (!node) continue;  // leaves keep their gradient
    const Tensor dout = v.grad();
    if (dout.defined()) node->backward(dout, *node);
    if (check) check(root_edge, v);
    if (!v.meta().retain_grad) v.meta().grad = Tensor();  // intermediate gradients are done
    // This Node is done too: free it now, while it is still in the cache. (With a hook, the
    // graph is kept to the end: anomaly mode's report walks from the output to a bad gradient.)
    if (!retain_graph && !check) free_node(*node);
  }
  if (!retain_graph && check)
    for (const Edge& v : order)
      if (v.node()) free_node(*v.node());
  // [docs:end]
}

// ================================================================================================
// print_graph

std::string graph_to_string(const Variable& root) {
  std::ostringstream os;
  std::unordered_map<const void*, int> ids;  // Nodes already printed get a number
  // Iterative pre-order walk: (variable, depth)
  std::vector<std::pair<Edge, int>> stack{{Edge(root), 0}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    os << std::string(2 * depth, ' ') << (depth ? "<- " : "") << v.op();
    if (!v.name().empty()) os << " '" << v.name() << "'";
    os << ' ' << v.shape();
    if (v.is_leaf()) {
      os << (v.requires_grad() ? " requires_grad" : " constant") << '\n';
      continue;
    }
    const Node* n = v.node().get();
    auto found = ids.find(n);
    if (found != ids.end()) {
      os << " (#" << found->second << ", shown above)\n";
      continue;
    }
    const int id = static_cast<int>(ids.size()) + 1;
    ids[n] = id;
    os << " #" << id << (n->freed ? " (freed)" : "") << '\n';
    for (auto in = n->inputs.rbegin(); in != n->inputs.rend(); ++in) stack.emplace_back(*in, depth + 1);
  }
  return os.str();
}

void print_graph(const Variable& root, std::ostream& os) { os << graph_to_string(root); }
void print_graph(const Variable& root) { print_graph(root, std::cout); }

}  // namespace seqgrad
