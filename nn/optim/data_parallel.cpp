// nn/optim/data_parallel.cpp - the shards' forward and backward on the pool, then the fixed-order
// sum of their gradients; see data_parallel.h.
#include "nn/optim/data_parallel.h"

#include <algorithm>

#include "autograd/hooks.h"
#include "tensor/allocator.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/matmul.h"
#include "tensor/random.h"
#include "tensor/thread_pool.h"

namespace seqgrad::nn {

namespace {

// The calling thread's autograd hooks (autograd/hooks.h) for the scope's lifetime, then its own again.
class HooksScope {
 public:
  explicit HooksScope(const AutogradHooks& hooks) : saved_(autograd_hooks()) { autograd_hooks() = hooks; }
  ~HooksScope() { autograd_hooks() = saved_; }
  HooksScope(const HooksScope&) = delete;
  HooksScope& operator=(const HooksScope&) = delete;

 private:
  AutogradHooks saved_;
};

}  // namespace

uint64_t shard_seed(uint64_t stream, int64_t shard) {
  // splitmix64's finaliser (Steele, Lea and Flood 2014), applied twice: a bijection that mixes
  // every input bit into every output bit.
  auto mix = [](uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  return mix(mix(stream) ^ static_cast<uint64_t>(shard));
}

std::pair<int64_t, int64_t> shard_range(int64_t n, int64_t shards, int64_t k) {
  check(shards >= 1 && k >= 0 && k < shards && n >= 0, "shard_range: expected 0 <= k < shards and n >= 0, got n = ", n,
        ", shards = ", shards, ", k = ", k);
  const int64_t base = n / shards, longer = n % shards;
  const int64_t begin = k * base + std::min(k, longer);
  return {begin, begin + base + (k < longer ? 1 : 0)};
}

// [docs:data_parallel_step]
std::vector<real> data_parallel_backward(const std::vector<Variable>& parameters, int64_t replicas, uint64_t stream,
                                         const std::function<Variable(int64_t shard)>& loss_of_shard) {
  check(replicas >= 1, "data_parallel_backward: expected at least 1 replica, got ", replicas);
  // What the calling thread has set and each shard's thread must have too.
  const MatmulPrecision precision = matmul_precision();
  const AutogradHooks hooks = autograd_hooks();

  // 1. Each shard: forward and backward on one thread, gradients into the shard's own buffers.
  std::vector<GradientShard> shards(static_cast<size_t>(replicas));
  std::vector<real> losses(static_cast<size_t>(replicas));
  parallel_for(0, replicas, /*grain=*/1, [&](int64_t k0, int64_t k1) {
    const ThreadBlockCache own_blocks;  // this thread's freed blocks kept for it: no lock shared with the others
    for (int64_t k = k0; k < k1; ++k) {
      const MatmulPrecisionScope same_precision(precision);
      const HooksScope same_hooks(hooks);
      Generator generator(shard_seed(stream, k));
      const GeneratorScope draws(generator);
      const CollectGradients into(shards[static_cast<size_t>(k)]);
      const Variable loss = loss_of_shard(k);
      check(loss.defined() && loss.numel() == 1, "data_parallel_backward: shard ", k,
            " must return a scalar loss, got ", loss.defined() ? "shape " + cat(loss.shape()) : "an undefined Variable");
      losses[static_cast<size_t>(k)] = loss.item();
      loss.backward();
    }
  });

  // 2. The all-reduce: for each parameter, g_0 + g_1 + ... + g_{R-1}, in shard order, then added
  // to its .grad. (Taking the gradients out of the shards is bookkeeping, done here, since a
  // shard's table is not to be changed by two threads at once; the sums run on the pool, one
  // parameter per task.)
  std::vector<std::vector<Tensor>> grads(parameters.size());
  for (size_t p = 0; p < parameters.size(); ++p)
    for (GradientShard& shard : shards) grads[p].push_back(shard.take(parameters[p]));
  parallel_for(0, static_cast<int64_t>(parameters.size()), 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      Tensor sum;
      for (const Tensor& g : grads[static_cast<size_t>(p)]) {
        if (!g.defined()) continue;
        if (!sum.defined()) sum = g.is_unique() ? g : g.clone();
        else sum.add_(g);
      }
      if (!sum.defined()) continue;  // no shard reached it: its .grad stays
      Variable param = parameters[static_cast<size_t>(p)];
      param.set_grad(param.grad().defined() ? param.grad() + sum : sum);
    }
  });
  return losses;
}
// [docs:end]

}  // namespace seqgrad::nn
