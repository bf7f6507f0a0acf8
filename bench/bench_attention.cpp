// bench/bench_attention.cpp - what attention costs as sequences grow.
//
// Times one scaled dot-product attention layer, forward and backward, for query and key
// lengths T = S = 16 ... 1024 (model width 64, batch 1, one head) and prints the median time
// and its growth from the previous row. The score matrix is T x S, so doubling the length
// should eventually quadruple the time: that is the quadratic cost of attention.
//   make bench && build/bench_attention [--max-len N] [--repeats R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "seqgrad.h"

using namespace seqgrad;

int main(int argc, char** argv) {
  int64_t max_len = 1024, repeats = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--max-len" || flag == "--repeats") && i + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1) {
        std::fprintf(stderr, "bench_attention: %s expects a positive whole number, got '%s'\n", flag.c_str(), argv[i]);
        return 2;
      }
      (flag == "--max-len" ? max_len : repeats) = v;
    } else {
      std::fprintf(stderr, "bench_attention: unknown flag '%s'; expected --max-len N or --repeats R\n", flag.c_str());
      return 2;
    }
  }
  const int64_t C = 64;
  manual_seed(0);
  std::printf("# one attention layer, forward + backward, width %lld, threads %d\n", static_cast<long long>(C),
              get_num_threads());
  double previous = 0;
  for (int64_t L = 16; L <= max_len; L *= 2) {
    const Tensor q = randn({1, L, C}), k = randn({1, L, C}), v = randn({1, L, C});
    std::vector<double> ms;
    for (int64_t r = 0; r < repeats; ++r) {
      Variable vq(q, true), vk(k, true), vv(v, true);
      const auto t0 = std::chrono::steady_clock::now();
      nn::AttentionResult out = nn::scaled_dot_product_attention(vq, vk, vv);
      sum(out.context).backward();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("attention len=%lld ms=%.3f growth=%s\n", static_cast<long long>(L), median,
                previous > 0 ? (std::to_string(median / previous).substr(0, 4) + "x").c_str() : "-");
    previous = median;
  }
  return 0;
}
