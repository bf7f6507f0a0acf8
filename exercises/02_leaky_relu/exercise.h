// exercises/02_leaky_relu - a new differentiable op (chapters 2 and 12).
//
//   y = x            where x > 0
//   y = slope * x    elsewhere                  x (any shape) -> y (same shape)
//
// Write it as ONE op, the way autograd/ops_math.cpp writes relu: compute the value with a
// tensor kernel (map), then make_result("leaky_relu", value, {x}, backward) with a backward
// lambda that adds the input's gradient through node.add_grad. (Composing it from where() or
// relu() would give the right numbers, but the check asks for the op by name.)
#pragma once

#include "seqgrad.h"

seqgrad::Variable leaky_relu(const seqgrad::Variable& x, seqgrad::real slope = seqgrad::real(0.01));
