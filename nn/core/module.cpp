// nn/core/module.cpp - registration, recursive traversal with dotted names, printing.
#include "nn/core/module.h"

#include <algorithm>
#include <sstream>

#include "tensor/check.h"

namespace seqgrad::nn {

Variable Module::forward(const Variable&) {
  check(false, name(), ": forward(x) with a single Variable is not defined for this module; call its own "
        "forward (see its header)");
  return Variable();
}

// ================================================================================================
// Registration

void Module::check_new_name(const std::string& n) const {
  check(!n.empty() && n.find('.') == std::string::npos, name(), ": expected a non-empty name without dots, got '",
        n, "'");
  for (const auto& p : params_) check(p.first != n, name(), ": the name '", n, "' is already registered");
  for (const auto& b : buffers_) check(b.first != n, name(), ": the name '", n, "' is already registered");
  for (const auto& c : children_) check(c.first != n, name(), ": the name '", n, "' is already registered");
}

Variable Module::register_parameter(const std::string& n, const Tensor& value, bool requires_grad) {
  check_new_name(n);
  params_.emplace_back(n, Variable(value, requires_grad));
  return params_.back().second;
}

void Module::unregister_parameter(const std::string& n) {
  const auto it = std::find_if(params_.begin(), params_.end(), [&](const auto& p) { return p.first == n; });
  check(it != params_.end(), name(), ": there is no parameter named '", n, "'");
  params_.erase(it);
}

Tensor Module::register_buffer(const std::string& n, const Tensor& value) {
  check_new_name(n);
  buffers_.emplace_back(n, value);
  return value;
}

void Module::add_child(const std::string& n, std::shared_ptr<Module> module) {
  check(module != nullptr, name(), ": cannot register a null module as '", n, "'");
  check_new_name(n);
  children_.emplace_back(n, std::move(module));
}

void Module::replace_child(const std::string& n, std::shared_ptr<Module> module) {
  check(module != nullptr, name(), ": cannot replace '", n, "' with a null module");
  for (auto& c : children_)
    if (c.first == n) {
      module->train(is_training());  // the new child follows its parent's mode
      c.second = std::move(module);
      return;
    }
  check(false, name(), ": there is no child named '", n, "' to replace");
}

void Module::check_child(const std::string& n, const Module* member) const {
  for (const auto& c : children_)
    if (c.first == n) {
      check(c.second.get() == member, name(), ": its member '", n, "' is not the child registered as '", n,
            "' (was it assigned? replace a child with model.", n, " = model.replace_module(\"", n, "\", ...))");
      return;
    }
  check(false, name(), ": there is no child named '", n, "'");
}

// ================================================================================================
// Traversal: own entries first, then each child's with "child." in front.

std::vector<std::pair<std::string, Variable>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> out = params_;
  for (const auto& [child_name, child] : children_)
    for (auto& [n, p] : child->named_parameters()) out.emplace_back(child_name + "." + n, p);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out = buffers_;
  for (const auto& [child_name, child] : children_)
    for (auto& [n, b] : child->named_buffers()) out.emplace_back(child_name + "." + n, b);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [n, p] : named_parameters()) out.push_back(p);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t total = 0;
  for (const Variable& p : parameters())
    if (p.requires_grad()) total += p.numel();
  return total;
}

void Module::zero_grad() {
  for (Variable& p : parameters()) p.zero_grad();
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, child] : children_) child->train(on);
}

// ================================================================================================
// Printing

std::string Module::tree_string(int indent) const {
  std::ostringstream os;
  os << name() << '(' << extra_repr();
  if (!children_.empty()) {
    os << (extra_repr().empty() ? "" : ",") << '\n';
    for (const auto& [n, child] : children_)
      os << std::string(indent + 2, ' ') << '(' << n << "): " << child->tree_string(indent + 2) << '\n';
    os << std::string(indent, ' ');
  }
  os << ')';
  return os.str();
}

std::string Module::to_string() const { return tree_string(0); }

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.to_string(); }

// ================================================================================================
// Sequential

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) {
  for (auto& m : modules) push_back(std::move(m));
}

Sequential& Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
  return *this;
}

Variable Sequential::forward(const Variable& x) {
  Variable h = x;
  for (auto& m : modules_) h = m->forward(h);
  return h;
}

}  // namespace seqgrad::nn
