// bench/bench_elementwise.cpp - the broadcasting and copying ops of a Transformer step, timed
// at the shapes bench_train's transformer workload gives them (batch 64, length 20, width 128,
// 4 heads, feed-forward 512).
//
// These ops move memory and do almost no arithmetic, so their cost is how they walk their
// operands: a bias added to every token, a causal or padding mask over the attention scores,
// the heads split off by a permute; and attention's scaled, masked softmax, composed and fused.
// Each line is the median of 15 samples of 20 calls, on one thread. The last lines time the
// thread pool itself: what a parallel_for job costs beyond the work it shares out.
//   make bench && build/bench_elementwise
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "seqgrad.h"

using namespace seqgrad;

namespace {

template <class F>
double median_us(F f) {
  std::vector<double> samples;
  for (int s = 0; s < 15; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) f();
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    samples.push_back(dt.count() / 20);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "bench_elementwise: takes no arguments, got '%s'\n", argv[1]);
    return 2;
  }
  set_num_threads(1);
  manual_seed(0);
  const Tensor hidden = randn({64, 20, 512}), bias = randn({512}), other = randn({64, 20, 512});
  const Tensor scores = randn({64, 4, 20, 20});
  const Tensor causal = gt(randn({20, 20}), scalar(0)), padding = gt(randn({64, 1, 1, 20}), scalar(0));
  const Tensor tokens = randn({64, 20, 4, 32});
  std::printf("# op                                             us per call (1 thread)\n");
  std::printf("add (64, 20, 512) + bias (512)                   %8.1f\n", median_us([&] { add(hidden, bias); }));
  std::printf("add (64, 20, 512) + (64, 20, 512)                %8.1f\n", median_us([&] { add(hidden, other); }));
  std::printf("masked_fill (64, 4, 20, 20), causal mask (20, 20) %7.1f\n",
              median_us([&] { masked_fill(scores, causal, -1e9f); }));
  std::printf("masked_fill (64, 4, 20, 20), padding (64, 1, 1, 20) %5.1f\n",
              median_us([&] { masked_fill(scores, padding, -1e9f); }));
  std::printf("permute (64, 20, 4, 32) -> (64, 4, 20, 32)       %8.1f\n",
              median_us([&] { permute(tokens, {0, 2, 1, 3}); }));
  // Attention's weights, composed (scale, fill, softmax: three passes, two temporaries) and fused.
  const real scale = 1 / std::sqrt(real(32));
  const real inf = std::numeric_limits<real>::infinity();
  std::printf("softmax(masked_fill(scores * scale, causal, -inf)) %6.1f\n",
              median_us([&] { softmax(masked_fill(scores * scale, causal, -inf), -1); }));
  std::printf("scaled_masked_softmax(scores, causal, scale)     %8.1f\n",
              median_us([&] { scaled_masked_softmax(scores, causal, scale); }));

  // What handing work to the pool costs: a job of two chunks on 2 threads, against one chunk
  // alone on this thread (the time the job would take if splitting were free). A chunk is a
  // fixed dependent loop of a microsecond or two, the size of an LSTM step's smaller ops; each
  // chunk keeps its result on its own cache line.
  struct alignas(64) Sink {
    volatile double value = 0;
  };
  Sink sinks[2];
  auto chunk = [&sinks](int64_t c) {
    double x = 1;
    for (int i = 0; i < 1000; ++i) x = x * 0.999999 + 1e-9;
    sinks[c].value = sinks[c].value + x;
  };
  const double alone = median_us([&] { chunk(0); });
  set_num_threads(2);
  const double job = median_us([&] {
    parallel_for(0, 2, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) chunk(c);
    });
  });
  std::printf("# thread pool                                    us per job (2 threads)\n");
  std::printf("one chunk alone, 1 thread                        %8.2f\n", alone);
  std::printf("parallel_for of two such chunks, 2 threads       %8.2f  (overhead %.2f)\n", job, job - alone);
}
