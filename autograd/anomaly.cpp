// autograd/anomaly.cpp - the NaN/Inf checks of anomaly mode, and the messages that say where.
#include "autograd/anomaly.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#include "autograd/hooks.h"
#include "tensor/check.h"

namespace seqgrad {

// Anomaly mode is the two checks below attached to the core's hooks (hooks.h).
bool anomaly_enabled() { return autograd_hooks().after_forward == check_forward_anomaly; }
void set_detect_anomaly(bool enabled) {
  AutogradHooks& hooks = autograd_hooks();
  hooks.after_forward = enabled ? check_forward_anomaly : nullptr;
  hooks.after_backward = enabled ? check_backward_anomaly : nullptr;
}

DetectAnomalyGuard::DetectAnomalyGuard(bool enabled) : previous_(anomaly_enabled()) { set_detect_anomaly(enabled); }
DetectAnomalyGuard::~DetectAnomalyGuard() { set_detect_anomaly(previous_); }

namespace {

// ================================================================================================
// Finding the first bad element

// The flat index of the first NaN or +-Inf in t (only NaN if nan_only), or -1. IEEE 754: a
// number whose exponent bits are all ones is not finite, and a NaN if its fraction is not zero.
// The first loops test that with integer operations and no early exit, so the compiler
// vectorises them; only a tensor with a bad element is scanned a second time.
int64_t first_bad(const Tensor& t, bool nan_only = false) {
  using Bits = std::conditional_t<sizeof(real) == 8, uint64_t, uint32_t>;
  constexpr Bits kExponent = sizeof(real) == 8 ? Bits(0x7ff0000000000000ULL) : Bits(0x7f800000U);
  constexpr Bits kMagnitude = ~(Bits(1) << (8 * sizeof(Bits) - 1));  // all but the sign bit
  const real* x = t.data();
  const int64_t n = t.numel();
  auto bits = [x](int64_t i) {
    Bits b;
    std::memcpy(&b, x + i, sizeof b);
    return b;
  };
  Bits bad = 0;
  if (nan_only) {
    for (int64_t i = 0; i < n; ++i) bad |= static_cast<Bits>((bits(i) & kMagnitude) > kExponent);
  } else {
    for (int64_t i = 0; i < n; ++i) bad |= static_cast<Bits>((bits(i) & kExponent) == kExponent);
  }
  if (!bad) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (nan_only ? std::isnan(x[i]) : !std::isfinite(x[i])) return i;
  return -1;
}

// "NaN at [1, 2]": which value, and where, as an index into the shape.
std::string bad_element(const Tensor& t, int64_t flat) {
  const real v = t.data()[flat];
  std::ostringstream os;
  os << (std::isnan(v) ? "NaN" : v > 0 ? "Inf" : "-Inf") << " at " << unravel_index(flat, t.shape());
  return os.str();
}

// ================================================================================================
// Describing a place in the graph, on one line (the tool prints errors as one line)

// "tanh [2, 3]" for a result, "leaf 'w' [3]" for a named leaf. (A Variable, or an Edge to one.)
template <typename V>
std::string describe(const V& v) {
  std::ostringstream os;
  os << v.op();
  if (!v.name().empty()) os << " '" << v.name() << "'";
  os << ' ' << v.shape();
  return os.str();
}

// The inputs of an op and what made each: "mul [2, 3] <- (tanh [2, 3], leaf 'w' [3]), leaf [] ".
template <typename V>
std::string describe_inputs(const std::vector<V>& inputs) {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const V& in = inputs[i];
    s += (i ? ", " : "") + describe(in);
    if (!in.node() || in.node()->inputs.empty()) continue;
    s += " <- (";
    for (size_t k = 0; k < in.node()->inputs.size(); ++k) s += (k ? ", " : "") + describe(in.node()->inputs[k]);
    s += ")";
  }
  return s;
}

// "mean [] <- mul [4] <- log [4]": the shortest chain of ops from the output down to `target`,
// found by a breadth-first search (run only when a check has failed). Long chains (an RNN
// unrolled over many steps) keep their first and last four links.
std::string path_from(const Edge& root, const Edge& target) {
  std::unordered_map<const Node*, const Edge*> parent;  // node -> the Edge whose node uses it
  std::deque<const Edge*> queue{&root};
  parent.emplace(root.node().get(), nullptr);
  while (!queue.empty() && !parent.count(target.node().get())) {
    const Edge* v = queue.front();
    queue.pop_front();
    for (const Edge& in : v->node()->inputs)
      if (in.node() && parent.emplace(in.node().get(), v).second) queue.push_back(&in);
  }
  std::vector<std::string> links;
  for (const Edge* v = &target; v; v = parent.at(v->node().get())) links.push_back(describe(*v));
  std::string s;
  for (size_t k = links.size(); k-- > 0;) {
    const size_t from_top = links.size() - 1 - k;
    if (links.size() > 9 && from_top >= 4 && k >= 4) {
      if (from_top == 4) s += cat(" <- ... (", links.size() - 8, " more)");
      continue;
    }
    s += (from_top ? " <- " : "") + links[k];
  }
  return s;
}

}  // namespace

// ================================================================================================
// The checks

namespace {

// An infinity in a forward value is meant when the op was told to write it (masked_fill(scores,
// mask, -inf) is how attention hides positions) or when an input already held one (the masked
// scores on their way to softmax). A NaN is never meant.
bool intended_infinity(const char* op, const Tensor& value, int64_t bad, const std::vector<Variable>& inputs) {
  if (std::isnan(value.data()[bad])) return false;
  if (std::string(op) == "masked_fill") return true;
  for (const Variable& in : inputs)
    if (first_bad(in.value()) >= 0) return true;
  return false;
}

}  // namespace

void check_forward_anomaly(const char* op, const Tensor& value, const std::vector<Variable>& inputs) {
  int64_t bad = first_bad(value);
  if (bad < 0) return;
  if (intended_infinity(op, value, bad, inputs)) {  // then only a NaN is an anomaly
    bad = first_bad(value, /*nan_only=*/true);
    if (bad < 0) return;
  }
  throw std::runtime_error(cat("detect_anomaly: forward of '", op, "' produced ", bad_element(value, bad),
                               " in its output, shape ", value.shape(), "; its inputs: ", describe_inputs(inputs)));
}

void check_backward_anomaly(const Edge& root, const Edge& v) {
  const Node& node = *v.node();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Edge& in = node.inputs[i];
    if (!in.requires_grad() || !in.grad().defined()) continue;
    const int64_t bad = first_bad(in.grad());
    if (bad < 0) continue;
    throw std::runtime_error(cat("detect_anomaly: backward of '", node.op, "' produced ", bad_element(in.grad(), bad),
                                 " in the gradient for input ", i, ", shape ", in.shape(),
                                 "; its inputs: ", describe_inputs(node.inputs), "; path from the output: ",
                                 path_from(root, v)));
  }
}

}  // namespace seqgrad
