// autograd/variable.h - Variable: a Tensor, its gradient, and the Node that made it.
//
// Every op on Variables computes its value with tensor/ kernels and, when any input requires a
// gradient, records a Node: the op's name, an Edge to each input, and a backward function that
// turns the gradient of the output into gradients of the inputs. backward() (engine.h) walks
// those Nodes in reverse. A Variable is a handle: copies share the same value, gradient and
// history. An Edge keeps an input's gradient and history but not its value, so the graph holds
// only the tensors the backward functions saved (as PyTorch does).
// What this is not: a tape, or a graph you build before running. The graph is built as the
// forward pass runs ("define by run"), exactly like PyTorch. Read next: ops.h, engine.h.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad {

struct Node;

// Everything a Variable is to the graph, except its value (PyTorch's AutogradMeta): the
// gradient, whether it wants one, the Node that made it, its name. The handles of a Variable
// share one, and so do the Edges of the Nodes that use it as an input.
struct AutogradMeta {
  Tensor grad;                 // d(loss)/d(this), accumulated by backward; undefined until then
  bool requires_grad = false;
  bool retain_grad = false;    // keep grad after backward although this is not a leaf
  std::shared_ptr<Node> node;  // the op that made it; null for a leaf
  std::string name;            // shown by print_graph

  AutogradMeta() = default;
  AutogradMeta(const AutogradMeta&) = delete;
  AutogradMeta& operator=(const AutogradMeta&) = delete;
  ~AutogradMeta();  // tears a long chain of Nodes down without recursion (variable.cpp)
};

class Variable {
 public:
  Variable() = default;  // undefined
  // A leaf: a value you made, not the result of an op. Parameters are leaves with
  // requires_grad = true.
  explicit Variable(Tensor value, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  const Tensor& value() const;
  Tensor& value();  // the numbers, for optimizers and initialisers to update in place
  const Shape& shape() const { return value().shape(); }
  int64_t dim() const { return value().dim(); }
  int64_t size(int64_t axis) const { return value().size(axis); }
  int64_t numel() const { return value().numel(); }
  real item() const { return value().item(); }

  // d(loss)/d(this), accumulated by backward(); undefined until a gradient arrives.
  const Tensor& grad() const;
  void set_grad(const Tensor& grad);
  // Forget the gradient (set it to undefined), as PyTorch's zero_grad(set_to_none=True).
  void zero_grad();

  bool requires_grad() const;
  // Only leaves may change this: a result's requires_grad follows from its inputs.
  void set_requires_grad(bool requires_grad);
  bool is_leaf() const;
  // Non-leaf gradients are freed once backward is done with them; call this first to keep one.
  void retain_grad();
  bool retains_grad() const;

  // The op that made this Variable ("leaf" for a leaf) and its recorded Node (null for leaves).
  const std::string& op() const;
  const std::shared_ptr<Node>& node() const;

  // A name shown by print_graph ("x", "weight"); empty by default.
  const std::string& name() const;
  Variable& set_name(std::string name);

  // The same value, cut off from the graph: a leaf that does not require grad.
  Variable detach() const;

  // Reverse-mode differentiation from this Variable (see engine.h for the rules):
  //   loss.backward();                     // loss must have one element
  //   y.backward(dy);                      // any shape, with d(loss)/dy given
  //   loss.backward({}, /*retain_graph=*/true);   // keep the graph for a second backward
  void backward(const Tensor& grad = Tensor(), bool retain_graph = false) const;

  // Identity of the underlying Variable (copies compare equal).
  bool same(const Variable& other) const { return impl_ == other.impl_; }

 private:
  struct Impl;  // the value and a share of the AutogradMeta
  friend class Edge;
  friend class GradientShard;  // finds a leaf's gradient by its AutogradMeta
  friend Variable make_result(const char*, Tensor, std::vector<Variable>, std::function<void(const Tensor&, Node&)>);
  std::shared_ptr<Impl> impl_;
};

// What a Node keeps of one input: the input's shape when the op ran and its AutogradMeta (where
// its gradient goes, what made it), but not its value. So an intermediate result is freed as
// soon as no handle and no backward function holds it: a residual sum that only LayerNorm read
// (LayerNorm saves its normalised input) does not live until backward.
class Edge {
 public:
  explicit Edge(const Variable& v);
  const Shape& shape() const { return shape_; }
  bool requires_grad() const { return meta_->requires_grad; }
  const std::shared_ptr<Node>& node() const { return meta_->node; }
  bool is_leaf() const { return meta_->node == nullptr; }
  const std::string& op() const;  // as Variable::op()
  const std::string& name() const { return meta_->name; }
  const Tensor& grad() const { return meta_->grad; }
  // The shared record itself, for the engine (which clears gradients) and Node::add_grad.
  AutogradMeta& meta() const { return *meta_; }

 private:
  friend struct AutogradMeta;  // its destructor takes the graph apart
  std::shared_ptr<AutogradMeta> meta_;
  Shape shape_;
};

// The backward function of a Node. It receives the gradient of the Node's output and adds
// the gradients of its inputs through node.add_grad(i, g). It must capture only Tensors and
// plain values, never Variables: a captured Variable would keep the whole graph below it alive.
// The tensors it captures are exactly what the graph keeps for backward.
using BackwardFn = std::function<void(const Tensor& dout, Node& node)>;

struct Node {
  std::string op;
  std::vector<Edge> inputs;  // one per input of the op, in order (shapes, gradients; no values)
  BackwardFn backward;
  bool freed = false;  // set once backward() has run without retain_graph

  // Does input i want a gradient? Backward functions skip the work when it does not.
  bool needs_grad(size_t i) const { return inputs[i].requires_grad(); }
  // Accumulate g into input i's gradient (g must have the input's shape).
  void add_grad(size_t i, const Tensor& g);
  // The same without the temporary g: write(out, accumulate) computes the gradient into out,
  // a tensor of the input's shape, adding to it when accumulate is true; when it is false, out
  // holds garbage and write must set every element. An error thrown by write is rethrown with
  // the op's name and the input's index in front.
  // A weight used at every step of a sequence gets a gradient per step; matmul's and linear's
  // backward add each one straight into the gradient already there (gemm's accumulate).
  void add_grad_into(size_t i, const std::function<void(Tensor& out, bool accumulate)>& write);
  // Accumulate g into the region start.. along `axis` of input i's gradient (g has the input's
  // shape except along axis). What slice's backward uses: no full-size zeros per slice. The
  // first slice to arrive makes the buffer (zeros around g, in one pass: slice_add); later
  // ones are added in place (slice_add_).
  void add_grad_slice(size_t i, int axis, int64_t start, const Tensor& g);
};

// Records `value` as the result of op `op` applied to `inputs`. If gradient recording is on
// and some input requires grad, the result carries a Node with `backward`; otherwise it is a
// plain constant and `backward` is dropped. Every op in ops.h ends with this call.
Variable make_result(const char* op, Tensor value, std::vector<Variable> inputs, BackwardFn backward);

// ------------------------------------------------------------------------------------------------
// Gradient shards: where the gradients of leaves go (data parallelism, nn/optim/data_parallel.h)
//
// Data parallelism runs one model on R parts of a batch at once, each part's forward and backward
// on its own thread with its own graph. The graphs share the parameters, which are leaves, so
// their backward passes would add into the same .grad at the same time. A GradientShard is one
// part's own gradients: while a CollectGradients scope for it lives on a thread, every gradient
// that thread's backward adds to a leaf goes into the shard's tensor for that leaf instead, and
// the leaf's .grad stays as it was. The caller then sums the shards in a fixed order (what
// PyTorch's DistributedDataParallel does across processes with an all-reduce). Gradients of
// results that are not leaves stay where they always are: each graph has its own.
//   GradientShard shard;
//   { CollectGradients into(shard); loss.backward(); }   // weight.grad() unchanged
//   Tensor g = shard.take(weight);                        // d(loss)/d(weight), or undefined
class GradientShard {
 public:
  // The gradient collected for `leaf` (undefined if none arrived), moved out of the shard.
  Tensor take(const Variable& leaf);

 private:
  friend Tensor& gradient_slot(const Edge& in);  // variable.cpp: where add_grad adds
  std::unordered_map<const AutogradMeta*, Tensor> grads_;
};
// While it lives, this thread's backward() adds the gradients of leaves to `shard`. Scopes nest.
class CollectGradients {
 public:
  explicit CollectGradients(GradientShard& shard);
  ~CollectGradients();
  CollectGradients(const CollectGradients&) = delete;
  CollectGradients& operator=(const CollectGradients&) = delete;

 private:
  GradientShard* previous_;
};

// ------------------------------------------------------------------------------------------------
// Gradient mode

// Is recording on for this thread? (on by default)
bool grad_enabled();

// Turns recording off while it lives, for inference and for optimizer updates:
//   { NoGradGuard no_grad; Variable y = model.forward(x); }
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace seqgrad
