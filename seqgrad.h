// seqgrad.h - one include for the whole public API, for users who want exactly that.
//   #include "seqgrad.h"
// The library is layered bottom-up: tensor/ (arrays and kernels), autograd/ (gradients),
// then nn/, data/ and viz/. Each header opens by saying what it holds and what to read next.
#pragma once

#include "tensor/check.h"
#include "tensor/dtype.h"
#include "tensor/elementwise.h"
#include "tensor/matmul.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/shape.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"
#include "tensor/tensor.h"
#include "tensor/thread_pool.h"

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "autograd/variable.h"
