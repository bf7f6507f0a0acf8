// examples/07_self_attention - one self-attention layer, taken apart on a five-word sentence.
//
// New since 06: nothing to train. Example 06 used self-attention inside a whole Transformer;
// here we open it up. Each word becomes a vector; three learned projections give it a query
// ("what am I looking for?"), a key ("what do I contain?") and a value ("what do I pass on?");
// every word scores every other word by query . key, the scores are scaled by 1/sqrt(HS),
// softmaxed into weights, and each word's output is the weighted sum of the values. Every
// intermediate is printed with its shape; then the causal mask, the reason for the scaling,
// and the same computation by nn::scaled_dot_product_attention and nn::MultiHeadAttention.
//   build/examples/07_self_attention
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "nn/attention/attention.h"
#include "nn/core/embedding.h"
#include "nn/core/linear.h"
#include "nn/transformer/multihead_attention.h"
#include "examples/common/args.h"
#include "seqgrad.h"

using namespace seqgrad;

// ===============================================================================================
// Printing a (rows, cols) matrix with labels

void show(const std::string& title, const Tensor& m, const std::vector<std::string>& rows,
          const std::vector<std::string>& cols = {}) {
  std::cout << "\n" << title << "   shape " << m.shape() << "\n";
  const int64_t R = m.size(0), C = m.size(1);
  std::cout << "        ";
  for (int64_t c = 0; c < C; ++c) std::cout << std::setw(8) << (cols.empty() ? cat("[", c, "]") : cols[c]);
  std::cout << "\n";
  for (int64_t r = 0; r < R; ++r) {
    std::cout << std::setw(6) << rows[r] << "  ";
    for (int64_t c = 0; c < C; ++c) {
      const real v = m.at({r, c});
      if (std::isinf(v)) std::cout << std::setw(8) << (v < 0 ? "-inf" : "inf");
      else std::cout << std::setw(8) << std::fixed << std::setprecision(3) << v;
    }
    std::cout << "\n";
  }
}

// (1, T, X) -> (T, X), for printing
Tensor row(const Variable& x) { return x.value().reshape({x.size(1), x.size(2)}); }

int main(int argc, char** argv) {
  try {
    const cli::Args args("07_self_attention", "07_self_attention   (no flags)", {}, argc, argv);  // --help; no stray words
    // ---------------------------------------------------------------------------------------------
    // Config: a sentence of T = 5 words, embeddings of C = 4 numbers, one head of size HS = 4
    const std::vector<std::string> words{"the", "cat", "sat", "on", "mats"};
    const int64_t T = 5, C = 4, HS = 4;
    manual_seed(7);
    nn::Embedding embed(/*num_embeddings=*/T, /*embedding_dim=*/C);
    nn::Linear w_q(C, HS, /*bias=*/false), w_k(C, HS, /*bias=*/false), w_v(C, HS, /*bias=*/false);
    NoGradGuard no_grad;  // we only look, nothing is trained

    // ---------------------------------------------------------------------------------------------
    // 1. Words -> vectors: X (T, C). (A Transformer would add positional encodings here.)
    const Tensor ids = from_vector({0, 1, 2, 3, 4}, {1, T});
    const Variable X = embed.forward(ids);  // (1, T, C): a batch of one sentence
    show("X = embedding of each word (T, C)", row(X), words);

    // ---------------------------------------------------------------------------------------------
    // 2. Queries, keys and values: three projections of the same X
    const Variable Q = w_q.forward(X), K = w_k.forward(X), V = w_v.forward(X);  // (1, T, HS) each
    show("Q = X W_q^T   (T, HS): what each word looks for", row(Q), words);
    show("K = X W_k^T   (T, HS): what each word offers to be found by", row(K), words);
    show("V = X W_v^T   (T, HS): what each word passes on", row(V), words);

    // ---------------------------------------------------------------------------------------------
    // 3. Scores: every query against every key, S[t, s] = q_t . k_s
    const Variable scores = matmul(Q, K, /*trans_a=*/false, /*trans_b=*/true);  // (1, T, T)
    show("scores = Q K^T   (T, T): row t = how well word t's query matches each key", row(scores), words, words);

    // 4. Scaling by 1/sqrt(HS) keeps the scores near unit variance (section 8 below shows why)
    const Variable scaled = scores / std::sqrt(static_cast<real>(HS));
    show(cat("scaled = scores / sqrt(", HS, ")   (T, T)"), row(scaled), words, words);

    // 5. Softmax over each row: weights >= 0 that sum to 1
    const Variable weights = softmax(scaled, -1);  // (1, T, T)
    show("weights = softmax(scaled) along each row   (T, T)", row(weights), words, words);
    std::cout << "row sums: " << sum(row(weights), -1) << "\n";

    // 6. The output of each word: the weighted sum of all values, out_t = sum_s w[t, s] v_s
    const Variable out = matmul(weights, V);  // (1, T, T) @ (1, T, HS) -> (1, T, HS)
    show("out = weights V   (T, HS): each word, now mixed with the words it attends to", row(out), words);

    // ---------------------------------------------------------------------------------------------
    // 7. The causal mask: a decoder must not see later words. Scores above the diagonal become
    // -inf, so exp(-inf) = 0 gives them exactly zero weight.
    const Tensor causal = nn::causal_mask(T);  // (T, T), 1 above the diagonal
    show("causal mask (1 = hidden)   (T, T)", causal, words, words);
    const Variable masked = masked_fill(scaled, causal, -std::numeric_limits<real>::infinity());
    show("masked scores   (T, T)", row(masked), words, words);
    const Variable causal_weights = softmax(masked, -1);
    show("causal weights   (T, T): 'the' can only look at itself, 'mats' at everything", row(causal_weights), words, words);
    const Variable causal_out = matmul(causal_weights, V);
    show("causal out   (T, HS)", row(causal_out), words);
    std::cout << "the first word's output is its own value: |out[0] - V[0]| = "
              << max(abs(slice(row(causal_out), 0, 0, 1) - slice(row(V), 0, 0, 1))).item()
              << "\nthe last word's output is unchanged by the mask:   |out[4] - unmasked out[4]| = "
              << max(abs(slice(row(causal_out), 0, 4, 5) - slice(row(out), 0, 4, 5))).item() << "\n";

    // ---------------------------------------------------------------------------------------------
    // 8. Why scale? q . k sums HS products of unit-variance numbers, so its variance is HS:
    // large heads give huge scores, and the softmax puts nearly all weight on one word.
    std::cout << "\nwhy 1/sqrt(HS): variance of q . k for random unit-variance q, k (1000 pairs)\n";
    std::cout << "    HS   var(q.k)  var(q.k/sqrt(HS))   mean largest weight over 5 keys: unscaled / scaled\n";
    for (int64_t hs : {4, 64, 512}) {
      const Tensor q = randn({1000, hs}), k = randn({1000, hs});
      const Tensor dots = sum(q * k, -1);  // (1000)
      const auto variance = [](const Tensor& x) { return mean(x * x).item() - std::pow(mean(x).item(), 2); };
      const Tensor five = matmul(q, slice(k, 0, 0, 5), false, true);  // 1000 queries x 5 keys
      const auto peak = [](const Tensor& s) { return mean(max(softmax(s, -1), -1)).item(); };
      std::cout << std::setw(6) << hs << std::setw(11) << std::setprecision(1) << variance(dots) << std::setw(19)
                << std::setprecision(2) << variance(dots / std::sqrt(static_cast<real>(hs))) << std::setw(22)
                << std::setprecision(3) << peak(five) << " / " << peak(five / std::sqrt(static_cast<real>(hs))) << "\n";
    }
    std::cout << "(a weight of ~1 means the softmax has saturated: almost no gradient reaches the other keys)\n";

    // ---------------------------------------------------------------------------------------------
    // 9. The library does steps 3-6 in one call; multi-head attention runs NH of them side by side
    const nn::AttentionResult lib = nn::scaled_dot_product_attention(Q, K, V, causal);
    std::cout << "\nnn::scaled_dot_product_attention(Q, K, V, causal) differs from the steps above by "
              << max(abs(lib.context.value() - causal_out.value())).item() << "\n";
    nn::MultiHeadAttention mha(/*embed_dim=*/C, /*num_heads=*/2);
    const nn::MultiHeadAttentionResult r = mha.forward(X, X, X, Tensor(), causal, /*need_weights=*/true);
    std::cout << "nn::MultiHeadAttention(4, 2): output " << r.output.shape() << " = (B, T, C), weights "
              << r.weights.shape() << " = (B, NH, T, T), two heads of size HS = 2\n";
    for (int64_t h = 0; h < 2; ++h)
      show(cat("head ", h, " causal weights   (T, T)"), slice(r.weights.value(), 1, h, h + 1).reshape({T, T}), words, words);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
