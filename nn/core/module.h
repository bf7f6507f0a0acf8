// nn/core/module.h - Module: the base of every layer and model.
//
// A Module owns named parameters (Variables that require grad), named buffers (Tensors saved
// in checkpoints but not trained) and named child Modules. Names compose with dots, so a
// parameter deep in a model is called "encoder.layers.0.linear1.weight", exactly as in
// PyTorch, and checkpoints map one-to-one onto PyTorch's state_dict. Sequential and ModuleList
// are the containers. What this is not: a graph or a compiler; forward() is plain C++.
// Read next: linear.h (the simplest layer), then activation.h, dropout.h, layernorm.h.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "autograd/variable.h"

namespace seqgrad::nn {

class Module {
 public:
  virtual ~Module() = default;

  // The class name ("Linear") and its settings ("in_features=64, out_features=32, bias=true"),
  // used by the printed form.
  virtual std::string name() const = 0;
  virtual std::string extra_repr() const { return ""; }

  // Modules with one input and one output (Linear, activations, Sequential) override this, so
  // they can be chained in a Sequential. Modules with other signatures (an LSTM returning its
  // state too) define their own forward and leave this one throwing.
  virtual Variable forward(const Variable& x);
  Variable operator()(const Variable& x) { return forward(x); }

  // Everything registered, recursively, in registration order, with dotted names.
  std::vector<Variable> parameters() const;
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // Puts `module` where the child registered as `name` was (the same name, the same place in
  // the traversal), so its parameters are the ones trained and saved, and returns it. Assign
  // it to the member that names the child too:
  //   model.score = model.replace_module("score", nn::make_score("dot", H, H));
  // (Assigning the member alone would leave the old child registered; the models check their
  // members against their children before running, and refuse such a model.)
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }
  // Throws unless `member` is the child registered as `name`: a member assigned without
  // replace_module would run a module whose parameters nothing trains or saves.
  void check_child(const std::string& name, const Module* member) const;
  int64_t num_parameters() const;  // total number of trainable numbers

  // Clear every parameter's gradient (sets it to undefined, as PyTorch's set_to_none=True).
  void zero_grad();

  // Training mode switches dropout on and has batch norm use (and update) batch statistics;
  // eval() switches dropout off and batch norm to its running statistics. Applies to all children.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // The whole tree, PyTorch style:
  //   Sequential(
  //     (0): Linear(in_features=2, out_features=16, bias=true)
  //     (1): ReLU()
  //   )
  std::string to_string() const;

 protected:
  // Called from a layer's constructor: register_parameter("weight", tensor) returns the
  // Variable (a handle sharing its value and gradient with the registered one).
  Variable register_parameter(const std::string& name, const Tensor& value, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, const Tensor& value);
  // The parameter is no longer this module's (weight tying: another module owns it, linear.h).
  void unregister_parameter(const std::string& name);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void replace_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name) const;
  std::string tree_string(int indent) const;

  std::vector<std::pair<std::string, Variable>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

std::ostream& operator<<(std::ostream& os, const Module& m);

// ================================================================================================
// Containers

// Children named "0", "1", ...; forward feeds each one's output to the next.
class Sequential : public Module {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
  Sequential& push_back(std::shared_ptr<Module> module);
  std::string name() const override { return "Sequential"; }
  Variable forward(const Variable& x) override;
  size_t size() const { return modules_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const { return modules_.at(i); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// A list of children named "0", "1", ... with no forward of its own (the owner loops over it).
template <class M = Module>
class ModuleList : public Module {
 public:
  ModuleList() = default;
  ModuleList& push_back(std::shared_ptr<M> module) {
    register_module(std::to_string(items_.size()), module);
    items_.push_back(std::move(module));
    return *this;
  }
  std::string name() const override { return "ModuleList"; }
  size_t size() const { return items_.size(); }
  const std::shared_ptr<M>& operator[](size_t i) const { return items_.at(i); }
  typename std::vector<std::shared_ptr<M>>::const_iterator begin() const { return items_.begin(); }
  typename std::vector<std::shared_ptr<M>>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<M>> items_;
};

}  // namespace seqgrad::nn
