// nn/optim/data_parallel.h - data parallelism inside one process: a batch cut into R fixed
// shards, each shard's forward and backward on its own thread with its own graph, the shards'
// gradients summed in a fixed order; then the optimizer steps once, as after any backward.
//
// The idea is PyTorch's DistributedDataParallel (DDP), which chapter 15 runs across processes:
// every replica holds the same weights, computes the gradient of its own part of the batch, and
// an all-reduce sums the replicas' gradients so that every replica takes the same step. Here the
// replicas are threads of one process and share the weights themselves (nothing is copied);
// each thread's backward adds the gradients of the weights into its own GradientShard
// (autograd/variable.h) instead of the weights' .grad, and the "all-reduce" is a sum over the
// shards, in shard order, for each weight:
//
//     batch (B pairs) -> shard 0 (rows 0 .. B/R)  -> loss_0 -> backward -> g_0 --+
//                        shard 1 (the next B/R)   -> loss_1 -> backward -> g_1 --+--> g = g_0 + g_1 + ... + g_{R-1}
//                        ...                                                    |      weight.grad += g
//                        shard R-1                -> ...    -> g_{R-1} ---------+
//
// Why it is faster: a training step is thousands of ops, and most of them are too small to split
// over threads (an LSTM's step on 64 sentences is a 64 x 512 product and a few elementwise ops);
// those run on one thread and leave the others idle. R shards are R independent streams of
// ops: each runs whole on its own thread, small ops included. (Inside a shard every op runs on
// that shard's thread alone: the pool is busy with the shards.)
//
// What the numbers depend on. The loss of the batch is a mean over its target tokens; shard k's
// loss is the mean over its own, and weighting it by w_k = (tokens of shard k) / (tokens of the
// batch) makes sum_k w_k loss_k the batch's loss and sum_k w_k g_k its gradient (the caller
// weights: loss_of_shard returns what is differentiated). The same mathematics as one shard,
// but not the same bits: each shard sums over fewer rows, and the shards' sums are added
// afterwards. The bits depend on R (and the batch), never on the number of threads: a shard is
// computed by the same ops whichever thread runs it, every op gives the same bits on any number
// of threads (tensor/thread_pool.h), and the sum runs in shard order. R = 1 is not this
// function at all: the trainer then runs today's step, bit for bit.
// Randomness: while shard k runs, its thread draws (dropout masks, hard attention's samples)
// from a Generator of its own, seeded by shard_seed(stream, k) (tensor/random.h, GeneratorScope):
// the draws depend on the stream (the trainer's seed and step) and the shard, never on which
// thread ran first. The process-wide generator is not advanced.
// The calling thread's matrix-product precision (tensor/matmul.h) and its autograd hooks
// (anomaly mode, autograd/anomaly.h) go with every shard to the thread that runs it.
//
//   nn::data_parallel_backward(model.parameters(), 2, stream, [&](int64_t k) {
//     const Batch part = batch_rows(k);                      // this shard's rows
//     return cross_entropy(model.forward(part.x), part.y) * weight[k];
//   });
//   clip_grad_norm(...); optimizer.step();
// Tests: tests/nn/test_data_parallel.cpp. Read next: examples/seqgrad/train.cpp (--replicas),
// docs/03-matmul-threads.md (the section on data parallelism).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "autograd/variable.h"

namespace seqgrad::nn {

// [docs:data_parallel_backward]
// For k = 0 .. replicas - 1, in parallel on the thread pool: loss_k = loss_of_shard(k) (a
// scalar), then loss_k.backward(), with the gradients of the leaves going to shard k's own
// buffers. Then, for each of `parameters` (each on its own, in parallel): the sum of the shards'
// gradients, g_0 + g_1 + ... in shard order, is added to its .grad (or becomes it). A parameter
// no shard reached keeps its .grad; gradients of leaves not in `parameters` are dropped.
// Returns the value of each loss_k, in shard order. An error in any shard is rethrown here after
// every shard has finished, and then no .grad has changed.
std::vector<real> data_parallel_backward(const std::vector<Variable>& parameters, int64_t replicas, uint64_t stream,
                                         const std::function<Variable(int64_t shard)>& loss_of_shard);
// [docs:end]

// The seed of shard k's random draws in the step whose stream is `stream` (splitmix64 of both,
// so that neighbouring streams and shards are unrelated sequences).
uint64_t shard_seed(uint64_t stream, int64_t shard);

// [begin, end) of shard k when n rows are cut into `shards` fixed parts: contiguous, in order,
// the first n % shards parts one row longer (numpy's array_split, torch.tensor_split). A part is
// empty when n < shards.
std::pair<int64_t, int64_t> shard_range(int64_t n, int64_t shards, int64_t k);

}  // namespace seqgrad::nn
