// autograd/variable.cpp - Variable's storage, gradient accumulation and gradient mode.
#include "autograd/variable.h"

#include "autograd/hooks.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/shape_ops.h"

namespace seqgrad {

AutogradHooks& autograd_hooks() {
  thread_local AutogradHooks hooks;
  return hooks;
}

// A Variable's handles share its value and its AutogradMeta; the Edges of the Nodes that use it
// share only the AutogradMeta.
struct Variable::Impl {
  Tensor value;
  std::shared_ptr<AutogradMeta> meta = std::make_shared<AutogradMeta>();
};

// Destroying the last owner of a long chain (an RNN unrolled over 100,000 steps) would destroy
// Node -> input Edge -> its AutogradMeta -> its Node -> ... recursively and overflow the stack.
// So a dying AutogradMeta detaches its Node and tears the chain down in a loop instead: a Node
// whose last owner we are hands its inputs' Nodes to the work list before it is destroyed.
AutogradMeta::~AutogradMeta() {
  std::vector<std::shared_ptr<Node>> pending;
  if (node) pending.push_back(std::move(node));
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() != 1) continue;  // still owned elsewhere: not ours to tear down
    for (Edge& in : n->inputs)
      if (in.meta_.use_count() == 1 && in.meta_->node) pending.push_back(std::move(in.meta_->node));
    // `n` is destroyed here; its inputs' AutogradMetas die without a Node, so nothing recurses.
  }
}

Edge::Edge(const Variable& v) : meta_(v.impl_->meta), shape_(v.shape()) {}

// ================================================================================================
// Variable

Variable::Variable(Tensor value, bool requires_grad) : impl_(std::make_shared<Impl>()) {
  check(value.defined(), "Variable: expected a defined tensor");
  impl_->value = std::move(value);
  impl_->meta->requires_grad = requires_grad;
}

namespace {
const std::string kLeafOp = "leaf";
}

const Tensor& Variable::value() const {
  check(defined(), "Variable: this Variable is undefined (default-constructed)");
  return impl_->value;
}

Tensor& Variable::value() {
  check(defined(), "Variable: this Variable is undefined (default-constructed)");
  return impl_->value;
}

const Tensor& Variable::grad() const {
  check(defined(), "Variable: this Variable is undefined (default-constructed)");
  return impl_->meta->grad;
}

void Variable::set_grad(const Tensor& grad) {
  check(!grad.defined() || grad.shape() == shape(), "set_grad: expected a gradient of shape ", shape(),
        ", got ", grad.shape());
  impl_->meta->grad = grad;
}

void Variable::zero_grad() { impl_->meta->grad = Tensor(); }

bool Variable::requires_grad() const { return impl_ && impl_->meta->requires_grad; }

void Variable::set_requires_grad(bool requires_grad) {
  check(is_leaf(), "set_requires_grad: only leaf Variables can change requires_grad; this one was made by '",
        op(), "' (use detach() to get a leaf)");
  impl_->meta->requires_grad = requires_grad;
}

bool Variable::is_leaf() const { return defined() && impl_->meta->node == nullptr; }
void Variable::retain_grad() { impl_->meta->retain_grad = true; }
bool Variable::retains_grad() const { return impl_->meta->retain_grad; }

const std::string& Variable::op() const { return impl_->meta->node ? impl_->meta->node->op : kLeafOp; }
const std::shared_ptr<Node>& Variable::node() const { return impl_->meta->node; }
const std::string& Edge::op() const { return meta_->node ? meta_->node->op : kLeafOp; }

const std::string& Variable::name() const { return impl_->meta->name; }
Variable& Variable::set_name(std::string name) {
  impl_->meta->name = std::move(name);
  return *this;
}

Variable Variable::detach() const { return Variable(value(), false); }

// ================================================================================================
// Gradient shards (variable.h): a thread's backward adds the gradients of leaves to its shard.

namespace {
thread_local GradientShard* tls_shard = nullptr;  // the innermost CollectGradients' shard, or none
}  // namespace

// Where a gradient for `in` is added: its own .grad, or, for a leaf while this thread collects
// into a shard, the shard's tensor for it.
Tensor& gradient_slot(const Edge& in) {
  if (tls_shard && in.is_leaf()) return tls_shard->grads_[&in.meta()];
  return in.meta().grad;
}

Tensor GradientShard::take(const Variable& leaf) {
  check(leaf.defined(), "GradientShard::take: the Variable is undefined");
  const auto it = grads_.find(leaf.impl_->meta.get());
  if (it == grads_.end()) return Tensor();
  Tensor g = std::move(it->second);
  grads_.erase(it);
  return g;
}

CollectGradients::CollectGradients(GradientShard& shard) : previous_(tls_shard) { tls_shard = &shard; }
CollectGradients::~CollectGradients() { tls_shard = previous_; }

// ================================================================================================
// Node::add_grad - where gradients meet: shape-checked, and always added, never assigned.

// [docs:add_grad]
void Node::add_grad(size_t i, const Tensor& g) {
  const Edge& in = inputs[i];
  if (!in.requires_grad()) return;
  check(g.shape() == in.shape(), op, ": gradient for input ", i, " has the wrong shape; expected ",
        in.shape(), ", got ", g.shape());
  Tensor& acc = gradient_slot(in);  // in.meta().grad, unless a GradientShard collects this leaf's
  if (!acc.defined()) {
    acc = g;  // may share storage with g: the next addition checks is_unique() first
  } else if (acc.is_unique()) {
    acc.add_(g);  // nobody else sees this buffer: add in place
  } else {
    acc = acc + g;
  }
}
// [docs:end]

// [docs:add_grad_into]
void Node::add_grad_into(size_t i, const std::function<void(Tensor&, bool)>& write) {
  const Edge& in = inputs[i];
  if (!in.requires_grad()) return;
  Tensor& acc = gradient_slot(in);
  auto run = [&](Tensor& out, bool accumulate) {
    try {
      write(out, accumulate);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(cat(op, ": gradient for input ", i, ": ", e.what()));
    }
  };
  if (acc.defined() && acc.is_unique()) return run(acc, /*accumulate=*/true);  // acc += gradient
  Tensor g = Tensor::empty(in.shape());
  run(g, /*accumulate=*/false);  // g = gradient; then the usual way: acc = g, or acc + g
  add_grad(i, g);
}
// [docs:end]

void Node::add_grad_slice(size_t i, int axis, int64_t start, const Tensor& g) {
  const Edge& in = inputs[i];
  if (!in.requires_grad()) return;
  Shape expect = in.shape();
  expect[axis] = g.dim() == static_cast<int64_t>(in.shape().size()) ? g.shape()[axis] : -1;
  check(g.shape() == expect, op, ": gradient for input ", i, " has the wrong shape; expected ", expect, ", got ",
        g.shape());
  Tensor& acc = gradient_slot(in);
  if (!acc.defined()) {
    acc = slice_add(in.shape(), axis, start, g);  // the first gradient: zeros around g
    return;
  }
  if (!acc.is_unique()) acc = acc.clone();  // someone else sees this buffer: copy before writing
  slice_add_(acc, axis, start, g);
}

// [docs:make_result]
Variable make_result(const char* op, Tensor value, std::vector<Variable> inputs, BackwardFn backward) {
  if (const auto check = autograd_hooks().after_forward) check(op, value, inputs);  // e.g. anomaly.h
  Variable out(std::move(value));
  if (!grad_enabled()) return out;
  bool any = false;
  for (const Variable& in : inputs) {
    check(in.defined(), op, ": an input Variable is undefined");
    any = any || in.requires_grad();
  }
  if (!any) return out;
  // The Node keeps an Edge to each input, not the input: its value stays alive only if the
  // backward function captured it.
  std::vector<Edge> edges(inputs.begin(), inputs.end());
  out.impl_->meta->requires_grad = true;
  out.impl_->meta->node = std::make_shared<Node>(Node{op, std::move(edges), std::move(backward)});
  return out;
}
// [docs:end]

// ================================================================================================
// Gradient mode

namespace {
thread_local bool tls_grad_enabled = true;
}

bool grad_enabled() { return tls_grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(tls_grad_enabled) { tls_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { tls_grad_enabled = previous_; }

}  // namespace seqgrad
