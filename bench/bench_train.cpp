// bench/bench_train.cpp - how long one training step of the standard workloads takes.
//
// The workloads are fixed, so that figures compare over time and against PyTorch
// (bench/bench_train_torch.py builds the same models). All: source and target vocabulary
// 40, batch 64, source and target length 20, teacher forcing, mean cross-entropy over the
// target tokens, Adam with learning rate 1e-3, random token ids, float32. One step is forward +
// backward + optimizer step.
//   lstm_attn    embedding 64; LSTM encoder, hidden 128; LSTM decoder cell, hidden 128, fed
//                [target embedding; previous attentional state] (input feeding, 64 + 128),
//                starting from the encoder's final state; Luong "general" attention over the
//                encoder outputs; attentional state h~ = tanh(W_c [context; h] + b_c);
//                logits = W_s h~ + b_s.
//   transformer  width 128, 4 heads, feed-forward 512 with ReLU, 2 encoder + 2 decoder layers,
//                post-norm, sinusoidal positions added to embeddings scaled by sqrt(128), causal
//                mask on the decoder, dropout 0.
//   transformer_varlen  the same model, but every step (warm-up included) draws its source
//                length S and target length T anew, each from 2 to 21, as a corpus of
//                sentences of every length does: nearly every tensor changes size from step to
//                step, which is what a caching allocator must not hoard memory on. The lengths
//                come from the generator below (varlen_lengths), which the PyTorch side
//                repeats, so both run the same shapes in the same order. Its peak_rss_mb is
//                the figure to compare.
//
//   make bench && build/bench_train --workload lstm_attn|transformer|transformer_varlen [--threads T[,T...]]
//                                   [--replicas R[,R...]] [--precision fp32|bf16]
//                                   [--steps N] [--warmup W] [--decode]
// prints one line
//   workload=<w> threads=<t> ms_per_step=<median> peak_rss_mb=<m> kernel=<gemm kernel>
// (with " replicas=R" after the threads when R > 1: --replicas R cuts each batch into R shards,
// each run forward and backward on its own thread, nn/optim/data_parallel.h; and with
// --precision bf16, "kernel=<gemm kernel>+<bf16 kernel> precision=bf16": the matrix products
// take bfloat16 inputs, tensor/matmul.h)
// with the median over the measured steps, after the warm-up steps (defaults 30 and 5), and
// the process's peak resident memory. --decode (transformer only) prints instead the speed of
// greedy decoding 20 tokens for the batch of 64, with and without the key/value cache:
//   workload=transformer_decode threads=<t> cache=on tokens_per_s=<median> ...
//
// --threads 1,2 (a list) trains one model, switching the pool between the thread counts after
// every step, and prints a line per count (--replicas 1,2 beside it pairs each count with its
// own R: --threads 1,2 --replicas 1,2 interleaves 1 thread unsharded with 2 threads on 2 shards); N and W count rounds (one step per count each). On a
// machine shared with other work the load drifts over seconds, and two separate runs can see
// different machines; steps interleaved a few milliseconds apart see the same one. stderr then
// also gets the median over the rounds of the first count's step time over each other's. (Each
// switch rebuilds the pool, so a step on more threads starts with a fresh worker and cold
// scratch buffers: if anything, that counts against it. peak_rss_mb is the whole run's.)
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_flags.h"
#include "seqgrad.h"

using namespace seqgrad;

namespace {

constexpr int64_t kVocab = 40, kBatch = 64, kSrcLen = 20, kTgtLen = 20;

// Random ids in [4, V): clear of <pad>, <bos>, <eos> and <unk>, as real sentences would be.
Tensor random_ids(int64_t rows, int64_t cols) {
  Tensor ids = zeros({rows, cols});
  for (int64_t i = 0; i < ids.numel(); ++i) ids.data()[i] = static_cast<real>(4 + default_generator().randint(kVocab - 4));
  return ids;
}

// ================================================================================================
// lstm_attn: Luong attention with input feeding, built from the library's pieces

class LstmAttn : public nn::Module {
 public:
  static constexpr int64_t E = 64, H = 128;
  LstmAttn() {
    src_embed = register_module("src_embed", std::make_shared<nn::Embedding>(kVocab, E));
    tgt_embed = register_module("tgt_embed", std::make_shared<nn::Embedding>(kVocab, E));
    encoder = register_module("encoder", std::make_shared<nn::LSTM>(nn::RNNOptions(E, H)));
    cell = register_module("cell", std::make_shared<nn::LSTMCell>(E + H, H));
    score = register_module("score", nn::make_score("general", H, H));
    combine = register_module("combine", std::make_shared<nn::Linear>(2 * H, H));
    out = register_module("out", std::make_shared<nn::Linear>(H, kVocab));
  }
  std::string name() const override { return "LstmAttn"; }

  // src (B, S), tgt_in (B, T) -> logits (B, T, V)
  Variable forward(const Tensor& src, const Tensor& tgt_in) {
    const int64_t B = src.size(0), T = tgt_in.size(1);
    nn::RNNResult enc = encoder->forward(src_embed->forward(src), nn::RNNState{});  // memory (B, S, H)
    nn::RNNState state{reshape(enc.state.h, {B, H}), reshape(enc.state.c, {B, H})};
    const Variable y = tgt_embed->forward(tgt_in);  // (B, T, E)
    Variable feed(zeros({B, H}));                   // h~_0
    std::vector<Variable> feeds;
    std::vector<Variable> per_step = cell->parameters();  // packed once for all T steps, as the library's decoder does
    for (const Variable& p : score->parameters()) per_step.push_back(p);
    for (const Variable& p : combine->parameters()) per_step.push_back(p);
    const ReusePackedWeights reuse(per_step);
    for (int64_t t = 0; t < T; ++t) {
      const Variable y_t = reshape(slice(y, 1, t, t + 1), {B, E});
      state = cell->forward(concat({y_t, feed}, 1), state);      // h_t from [y_t; h~_{t-1}]
      const Variable scores = score->forward(state.h, enc.output);  // (B, S)
      const nn::AttentionResult a = nn::attend(scores, enc.output, Tensor());
      feed = tanh(combine->forward(concat({a.context, state.h}, 1)));  // h~_t
      feeds.push_back(feed);
    }
    return out->forward(stack(feeds, 1));  // (B, T, V)
  }

  std::shared_ptr<nn::Embedding> src_embed, tgt_embed;
  std::shared_ptr<nn::LSTM> encoder;
  std::shared_ptr<nn::LSTMCell> cell;
  std::shared_ptr<nn::AttentionScore> score;
  std::shared_ptr<nn::Linear> combine, out;
};

nn::TransformerOptions transformer_options() {
  return nn::TransformerOptions(kVocab, kVocab)
      .with_d_model(128)
      .with_nhead(4)
      .with_dim_feedforward(512)
      .with_num_layers(2)
      .with_norm_first(false)
      .with_dropout(0);
}

// ================================================================================================
// Measuring

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// CPU time of the whole process: unlike the wall clock, it does not count time the process
// spent waiting for a core, which makes it the steadier figure on a busy machine.
double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double peak_rss_mb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports kilobytes
}

// transformer_varlen's lengths: step k's (S, T), each from 2 to 21, drawn by a 31-bit linear
// congruential generator (glibc rand's constants) that bench_train_torch.py repeats exactly:
//   x <- (1103515245 x + 12345) mod 2^31,   length = 2 + (x >> 16) mod 20
struct VarlenLengths {
  uint64_t x = 1;  // the seed
  int64_t next() {
    x = (1103515245 * x + 12345) % (uint64_t(1) << 31);
    return 2 + static_cast<int64_t>((x >> 16) % 20);
  }
};

// One step: fresh random data, forward, loss, backward, Adam. Returns the loss. With `replicas`
// R > 1, the batch's rows are cut into R shards, each run forward and backward on its own
// thread, and their gradients summed (nn/optim/data_parallel.h); every shard has as many target
// tokens per row, so shard k's mean loss is weighted by its share of the rows.
using StepFn = std::function<real(int64_t replicas)>;

// The loss of one batch (or shard): src (B, S), tgt (B, T + 1) -> the mean cross-entropy.
using LossFn = std::function<Variable(const Tensor& src, const Tensor& tgt)>;

StepFn make_step(const std::string& workload, std::shared_ptr<nn::Module>& keep,
                 std::unique_ptr<nn::Adam>& optimizer) {
  LossFn loss_of;
  std::function<std::pair<int64_t, int64_t>()> lengths = [] { return std::make_pair(kSrcLen, kTgtLen); };
  if (workload == "lstm_attn") {
    auto model = std::make_shared<LstmAttn>();
    keep = model;
    loss_of = [model](const Tensor& src, const Tensor& tgt) {
      const int64_t T = tgt.size(1) - 1;
      return cross_entropy(model->forward(src, slice(tgt, 1, 0, T)), slice(tgt, 1, 1, T + 1));
    };
  } else {
    auto model = std::make_shared<nn::Transformer>(transformer_options());
    keep = model;
    loss_of = [model](const Tensor& src, const Tensor& tgt) {
      const int64_t B = src.size(0), S = src.size(1), T = tgt.size(1) - 1;
      return cross_entropy(model->forward(src, std::vector<int64_t>(B, S), slice(tgt, 1, 0, T)), slice(tgt, 1, 1, T + 1));
    };
    if (workload == "transformer_varlen") {
      auto varlen = std::make_shared<VarlenLengths>();
      lengths = [varlen] {
        const int64_t S = varlen->next(), T = varlen->next();
        return std::make_pair(S, T);
      };
    }
  }
  optimizer = std::make_unique<nn::Adam>(keep->parameters(), nn::AdamOptions(1e-3));
  nn::Adam* opt = optimizer.get();
  const std::vector<Variable> params = keep->parameters();
  auto stream = std::make_shared<uint64_t>(0);
  return [loss_of, lengths, opt, params, stream](int64_t replicas) -> real {
    const auto [S, T] = lengths();
    const Tensor src = random_ids(kBatch, S), tgt = random_ids(kBatch, T + 1);
    opt->zero_grad();
    real value = 0;
    if (replicas == 1) {
      Variable loss = loss_of(src, tgt);
      loss.backward();
      value = loss.item();
    } else {
      const std::vector<real> parts = nn::data_parallel_backward(params, replicas, (*stream)++, [&](int64_t k) {
        const auto [b0, b1] = nn::shard_range(kBatch, replicas, k);
        const real share = static_cast<real>(b1 - b0) / static_cast<real>(kBatch);
        return loss_of(slice(src, 0, b0, b1), slice(tgt, 0, b0, b1)) * share;
      });
      for (real part : parts) value += part;
    }
    opt->step();
    return value;
  };
}

// Greedy decoding of kTgtLen tokens for a batch of kBatch, with or without the cache; the
// model is untrained, so <eos> rarely comes early, and max_len bounds every run the same way.
void bench_decode(int threads, int64_t runs) {
  nn::Transformer model(transformer_options());
  model.eval();
  const std::vector<int64_t> src_lengths(kBatch, kSrcLen);
  for (bool cache : {true, false}) {
    std::vector<double> rates;
    for (int64_t r = 0; r < runs + 1; ++r) {
      const Tensor src = random_ids(kBatch, kSrcLen);
      const double t0 = now_ms();
      const nn::DecodeResult out = nn::greedy_decode(
          model, src, src_lengths, nn::DecodeOptions().with_max_len(kTgtLen).with_use_cache(cache));
      const double ms = now_ms() - t0;
      int64_t tokens = 0;  // every step emits a token: the output ids, plus <eos> where it came
      for (const auto& ids : out.tokens) tokens += std::min<int64_t>(static_cast<int64_t>(ids.size()) + 1, kTgtLen);
      if (r > 0) rates.push_back(1000.0 * static_cast<double>(tokens) / ms);  // r = 0 warms up
    }
    std::printf("workload=transformer_decode threads=%d cache=%s tokens_per_s=%.0f batch=%lld max_len=%lld\n",
                threads, cache ? "on" : "off", median(rates), static_cast<long long>(kBatch),
                static_cast<long long>(kTgtLen));
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::TrainBenchFlags flags;
  try {
    flags = bench::parse_train_bench_flags(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr,
                 "bench_train: %s\nusage: bench_train --workload lstm_attn|transformer|transformer_varlen "
                 "[--threads T[,T...]] [--replicas R[,R...]] [--precision fp32|bf16] "
                 "[--steps N] [--warmup W] [--decode]\n",
                 e.what());
    return 2;
  }
  const std::string& workload = flags.workload;
  const std::vector<int64_t>& threads = flags.threads;
  const int64_t steps = flags.steps, warmup = flags.warmup;
  const bool decode = flags.decode;
  set_num_threads(static_cast<int>(threads[0]));
  set_matmul_precision(flags.precision == "bf16" ? MatmulPrecision::BFloat16 : MatmulPrecision::Float32);
  manual_seed(0);
  if (decode) {
    bench_decode(static_cast<int>(threads[0]), steps);
    return 0;
  }

  std::shared_ptr<nn::Module> model;
  std::unique_ptr<nn::Adam> optimizer;
  const StepFn step = make_step(workload, model, optimizer);
  // The configurations a step runs in, interleaved: (threads[c], replicas[c]).
  const std::vector<int64_t>& replicas = flags.replicas;
  const size_t counts = threads.size();
  for (int64_t s = 0; s < warmup; ++s)
    for (size_t c = 0; c < counts; ++c) {
      set_num_threads(static_cast<int>(threads[c]));
      step(replicas[c]);
    }
  std::vector<std::vector<double>> ms(counts), cpu(counts);  // per configuration, per round
  real loss = 0;
  for (int64_t s = 0; s < steps; ++s)
    for (size_t c = 0; c < counts; ++c) {
      set_num_threads(static_cast<int>(threads[c]));
      const double t0 = now_ms(), c0 = cpu_ms();
      loss = step(replicas[c]);
      ms[c].push_back(now_ms() - t0);
      cpu[c].push_back(cpu_ms() - c0);
    }
  // What a configuration is called on the lines: "threads=2", "threads=2 replicas=2".
  auto config = [&](size_t c) {
    std::string name = "threads=" + std::to_string(threads[c]);
    if (replicas[c] != 1) name += " replicas=" + std::to_string(replicas[c]);
    return name;
  };
  const std::string precision = flags.precision == "fp32" ? "" : " precision=" + flags.precision;
  const std::string kernel = flags.precision == "fp32" ? gemm_kernel() : std::string(gemm_kernel()) + "+" + bf16_kernel();
  for (size_t c = 0; c < counts; ++c) {
    std::printf("workload=%s %s ms_per_step=%.2f peak_rss_mb=%.1f kernel=%s%s\n", workload.c_str(), config(c).c_str(),
                median(ms[c]), peak_rss_mb(), kernel.c_str(), precision.c_str());
    std::fprintf(stderr, "# %s cpu_ms_per_step=%.2f (median CPU time of the process)\n", config(c).c_str(),
                 median(cpu[c]));
  }
  for (size_t c = 1; c < counts; ++c) {
    std::vector<double> ratio;
    for (int64_t s = 0; s < steps; ++s) ratio.push_back(ms[0][s] / ms[c][s]);
    std::fprintf(stderr, "# interleaved: %s step / %s step, median over %lld rounds: %.3f\n", config(0).c_str(),
                 config(c).c_str(), static_cast<long long>(steps), median(ratio));
  }
  std::fprintf(stderr, "# last loss %.9g\n", static_cast<double>(loss));
  return 0;
}
