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

#include "nn/activation.h"
#include "nn/checkpoint.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/init.h"
#include "nn/layernorm.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "nn/rnn.h"
#include "nn/schedule.h"
#include "nn/seq2seq.h"

#include "data/batch.h"
#include "data/metrics.h"
#include "data/tasks.h"
#include "data/tokenizer.h"
#include "data/toy2d.h"
#include "data/translation.h"
#include "data/vocab.h"

#include "viz/heatmap.h"
#include "viz/plot.h"
#include "viz/progress.h"
#include "viz/svg.h"
