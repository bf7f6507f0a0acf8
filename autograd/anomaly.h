// autograd/anomaly.h - anomaly mode: find the first op whose value or gradient is NaN or Inf.
//
// When on, make_result checks every op's output and the engine every gradient a Node produces;
// the first non-finite number throws std::runtime_error naming the op, its shapes, the element
// and where it sits in the graph (its inputs, and for a gradient the path from the output).
// Infinities that are meant pass: written by masked_fill (attention masks) or carried over from
// an input. Off by default: one branch per op. Like torch.autograd.detect_anomaly.
//   { DetectAnomalyGuard anomaly; Variable loss = model.forward(x); loss.backward(); }
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

// The checks themselves, which anomaly mode attaches to the core's hooks (hooks.h):
// make_result calls this with an op's output before recording it...
void check_forward_anomaly(const char* op, const Tensor& value, const std::vector<Variable>& inputs);
// ...and the engine calls this after `node` (the Node of `v`) has run its backward, with the
// output `root` that backward() started from.
void check_backward_anomaly(const Edge& root, const Edge& v);

}  // namespace seqgrad
