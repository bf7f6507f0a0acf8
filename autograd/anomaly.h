// autograd/anomaly.h - anomaly detection: find the first op whose value or gradient is NaN/Inf.
//
// A NaN in the loss says something went wrong, not where. With anomaly detection on, every op's
// forward output is checked as it is recorded (make_result), and every gradient as the backward
// sweep produces it (the engine); the first non-finite number throws a std::runtime_error naming
// the op, the shapes, the first bad element, and where the op sits in the graph. An infinity in
// a forward value is allowed where it is meant: written by masked_fill (attention masks use
// -inf) or carried over from an input that had one. A NaN, or an infinite gradient, never is:
//   detect_anomaly: backward of 'sqrt' produced Inf at [0] in the gradient for input 0, shape [3];
//   its inputs: leaf 'x' [3]; path from the output: sum [] <- sqrt [3]
// It is off by default and costs one branch per op when off; when on, every value is read once
// more (measured in README.md, "Reliability"). Like torch.autograd.detect_anomaly.
//   { DetectAnomalyGuard anomaly; Variable loss = model.forward(x); loss.backward(); }
// Read next: engine.h.
#pragma once

#include <vector>

#include "autograd/variable.h"

namespace seqgrad {

// Is anomaly detection on for this thread? (off by default)
bool anomaly_enabled();
void set_detect_anomaly(bool enabled);

// Turns anomaly detection on (or, with false, off) while it lives, then restores the previous mode.
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool enabled = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

// The checks themselves, called only when anomaly_enabled():
// make_result calls this with an op's output before recording it...
void check_forward_anomaly(const char* op, const Tensor& value, const std::vector<Variable>& inputs);
// ...and the engine calls this after `node` (the Node of `v`) has run its backward, with the
// output `root` that backward() started from.
void check_backward_anomaly(const Variable& root, const Variable& v);

}  // namespace seqgrad
