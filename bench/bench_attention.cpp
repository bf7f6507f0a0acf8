// bench/bench_attention.cpp - what attention costs as sequences grow.
//
// Part 1 times one scaled dot-product attention layer, forward and backward, for query and key
// lengths T = S = 16 ... 1024 (model width 64, batch 1, one head) and prints the median time
// and its growth from the previous row. The score matrix is T x S, so doubling the length
// should eventually quadruple the time: that is the quadratic cost of attention.
//
// Part 2 times one decoder step of an RNN encoder-decoder with attention (nn/attention/attention_seq2seq.h:
// Luong's decoder, GRU, hidden 64, the general score, batch 8) while decoding, with no gradient,
// for sources of S = 16, 64, 256, 1024 positions (the encoder runs before the clock starts). Global
// attention scores all S positions at every step; local-m and local-p attention score only the
// 2D + 1 = 7 positions of their window (D = 3), so their time should stay flat as S grows.
// Part 3 times causal self-attention (batch 8, 4 heads of 32), forward and backward, for
// T = S = 16 ... 512: every score computed (all_ms), and the queries in blocks that skip the
// scores the causal mask hides wholly (block16_ms, block32_ms: query_block of 16 and 32 rows,
// nn/attention/attention.h; 32 is the default, and neither splits below 4 blocks).
//   make bench && build/bench_attention [--max-len N] [--repeats R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nn/attention/attention.h"
#include "nn/attention/attention_seq2seq.h"
#include "seqgrad.h"

using namespace seqgrad;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Part 2: the median time of one decoder step (ms), over `repeats` runs of 16 steps each timed
// alone, for a batch of 8 random sources of S positions. mode 0 is global attention, 1 local-m,
// 2 local-p. A step takes tens of microseconds, so a median over many of them is what keeps
// the figure steady on a busy machine.
double decoder_step_ms(int mode, int64_t S, int64_t D, int64_t repeats) {
  const int64_t B = 8, V = 32, steps = 16;
  manual_seed(1);
  nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(V, V)
                                 .with_hidden_size(64)
                                 .with_embed_dim(32)
                                 .with_local(mode > 0, D, /*monotonic=*/mode == 1));
  model.eval();
  NoGradGuard no_grad;
  Tensor src = zeros({B, S});
  for (int64_t i = 0; i < src.numel(); ++i) src.data()[i] = static_cast<real>(4 + default_generator().randint(V - 4));
  const Tensor tokens = full({B}, 1);  // <bos> at every step: what a step costs does not depend on the token
  std::vector<double> ms;
  for (int64_t r = 0; r < repeats; ++r) {
    std::unique_ptr<nn::DecoderState> state = model.start(src, std::vector<int64_t>(B, S), nn::StartOptions{});
    model.step(*state, tokens);  // warm-up: the first step allocates what the others reuse
    for (int64_t t = 0; t < steps; ++t) {
      const auto t0 = std::chrono::steady_clock::now();
      model.step(*state, tokens);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  return median(ms);
}

}  // namespace

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
    const double m = median(ms);
    std::printf("attention len=%lld ms=%.3f growth=%s\n", static_cast<long long>(L), m,
                previous > 0 ? (std::to_string(m / previous).substr(0, 4) + "x").c_str() : "-");
    previous = m;
  }

  // Part 3: causal self-attention, 4 heads of 32, batch 8: all scores against query blocks that
  // skip the wholly masked ones (nn/attention/attention.h, query_block).
  std::printf("# causal self-attention, forward + backward, batch 8, 4 heads of 32, threads %d\n", get_num_threads());
  for (int64_t L = 16; L <= std::min<int64_t>(max_len, 512); L *= 2) {
    const Tensor q = randn({8, 4, L, 32}), k = randn({8, 4, L, 32}), v = randn({8, 4, L, 32});
    const Tensor mask = nn::causal_mask(L);
    auto time_ms = [&](int64_t block) {
      std::vector<double> ms;
      for (int64_t r = 0; r < repeats; ++r) {
        Variable vq(q, true), vk(k, true), vv(v, true);
        const auto t0 = std::chrono::steady_clock::now();
        sum(nn::scaled_dot_product_attention(vq, vk, vv, mask, 0, /*need_weights=*/false, block).context).backward();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      return median(ms);
    };
    const double all = time_ms(0), b16 = time_ms(16), b32 = time_ms(32);
    std::printf("causal len=%lld all_ms=%.3f block16_ms=%.3f block32_ms=%.3f\n", static_cast<long long>(L),
                all, b16, b32);
  }

  const int64_t D = 3;
  std::printf("# one decoder step, no gradient: Luong, GRU, hidden 64, general score, batch 8, local D=%lld, "
              "threads %d\n",
              static_cast<long long>(D), get_num_threads());
  for (int64_t S = 16; S <= std::min<int64_t>(max_len, 1024); S *= 4) {
    const double global = decoder_step_ms(0, S, D, repeats), local_m = decoder_step_ms(1, S, D, repeats),
                 local_p = decoder_step_ms(2, S, D, repeats);
    std::printf("decoder step S=%lld global_ms=%.3f local-m_ms=%.3f local-p_ms=%.3f\n", static_cast<long long>(S),
                global, local_m, local_p);
  }
  return 0;
}
