// nn/attention/attention.cpp - masks, the eight score functions, the weighted sum (soft_context, attend),
// scaled dot-product attention.
#include "nn/attention/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/shape_ops.h"

namespace seqgrad::nn {

// ================================================================================================
// Masks

Tensor padding_mask(const std::vector<int64_t>& lengths, int64_t S) {
  const int64_t B = static_cast<int64_t>(lengths.size());
  Tensor m = zeros({B, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = std::max<int64_t>(lengths[b], 0); s < S; ++s) m.data()[b * S + s] = 1;
  return m;
}

// [docs:causal_mask]
Tensor causal_mask(int64_t T) {
  Tensor m = zeros({T, T});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = t + 1; s < T; ++s) m.data()[t * T + s] = 1;
  return m;
}
// [docs:end]

// [docs:masked_softmax]
Variable masked_softmax(const Variable& scores, const Tensor& mask, int64_t axis) {
  if (!mask.defined()) return softmax(scores, axis);
  // exp(-inf) = 0, so masked positions get exactly zero weight. A row that is entirely -inf
  // has no maximum to subtract; the softmax kernel returns zeros there (tensor/softmax.h), and
  // masked_fill sends no gradient to filled places, so nothing becomes NaN.
  return softmax(masked_fill(scores, mask, -std::numeric_limits<real>::infinity()), axis);
}
// [docs:end]

// ================================================================================================
// Score functions

AttentionScore::AttentionScore(const ScoreOptions& o) : query_size(o.query_size), key_size(o.key_size) {}

Variable AttentionScore::forward(const Variable& query, const Variable& keys) {
  const std::string op = name();
  check(keys.dim() == 3 && keys.size(2) == key_size, op, ": expected keys of shape (B, S, ", key_size, "), got ",
        keys.shape());
  check((query.dim() == 2 || query.dim() == 3) && query.size(0) == keys.size(0) && query.size(-1) == query_size, op,
        ": expected a query of shape (", keys.size(0), ", ", query_size, ") or (", keys.size(0), ", T, ", query_size,
        "), got ", query.shape());
  if (query.dim() == 3) return score(query, keys);                    // (B, T, S)
  return squeeze(score(unsqueeze(query, 1), keys), 1);                // (B, 1, S) -> (B, S)
}

namespace {

// [docs:tanh_scores]
// q . k for every pair: (B, T, H) x (B, S, H) -> (B, T, S)
Variable dot_scores(const Variable& q, const Variable& k) { return matmul(q, k, /*trans_a=*/false, /*trans_b=*/true); }

// The hidden width A of concat, additive and mlp: attention_size, or H_q if none is given.
int64_t width(const ScoreOptions& o) { return o.attention_size > 0 ? o.attention_size : o.query_size; }

// v^T tanh(a + b) for every pair, where a = projected queries (B, T, A) and b = projected
// keys (B, S, A): broadcast to (B, T, S, A), tanh, then the dot with v (A) -> (B, T, S).
// Projecting first and adding is the same as W [q; k] with W = [W_q W_k], and the projections
// then cost A (T + S) H instead of A T S H; the tanh and the dot with v still take A T S.
Variable tanh_scores(const Variable& a, const Variable& b, const Variable& v) {
  Variable hidden = tanh(unsqueeze(a, 2) + unsqueeze(b, 1));       // (B, T, S, A)
  return squeeze(matmul(hidden, unsqueeze(v, 1)), 3);              // (B, T, S, A) @ (A, 1) -> (B, T, S)
}
// [docs:end]

// [docs:dot_general]
class DotScore : public AttentionScore {
 public:
  explicit DotScore(const ScoreOptions& o) : AttentionScore(o) {
    check(query_size == key_size, "DotScore: expected query and key sizes to be equal, got ", query_size, " and ", key_size);
  }
  std::string name() const override { return "DotScore"; }
  Variable score(const Variable& q, const Variable& k) override { return dot_scores(q, k); }
};

class ScaledDotScore : public AttentionScore {
 public:
  explicit ScaledDotScore(const ScoreOptions& o) : AttentionScore(o) {
    check(query_size == key_size, "ScaledDotScore: expected query and key sizes to be equal, got ", query_size, " and ", key_size);
  }
  std::string name() const override { return "ScaledDotScore"; }
  // Dot products of H unit-variance components have variance H; dividing by sqrt(H) keeps the
  // softmax out of its flat, saturated region as H grows.
  Variable score(const Variable& q, const Variable& k) override {
    return dot_scores(q, k) / std::sqrt(static_cast<real>(key_size));
  }
};

class GeneralScore : public AttentionScore {
 public:
  explicit GeneralScore(const ScoreOptions& o) : AttentionScore(o) {
    W = register_module("W", std::make_shared<Linear>(key_size, query_size, /*bias=*/false));  // W_a: keys into query space
  }
  std::string name() const override { return "GeneralScore"; }
  std::string extra_repr() const override { return cat(query_size, ", ", key_size); }
  // q^T W_a k can be grouped either way: (W_a k) for every key, or (q^T W_a) for every query.
  // Same numbers up to rounding; project whichever side has fewer rows. A decoder step has one
  // query and S keys, so it projects the query: S times less work than projecting the keys.
  Variable score(const Variable& q, const Variable& k) override {
    if (q.size(-2) <= k.size(-2)) return dot_scores(matmul(q, W->weight), k);  // (q^T W_a) k
    return dot_scores(q, W->forward(k));                                       // q^T (W_a k)
  }
  std::shared_ptr<Linear> W;
};
// [docs:end]

// [docs:concat_additive]
class ConcatScore : public AttentionScore {
 public:
  explicit ConcatScore(const ScoreOptions& o) : AttentionScore(o) {
    const int64_t a = width(o);
    W = register_module("W", std::make_shared<Linear>(query_size + key_size, a, /*bias=*/false));  // W_a acts on [q; k]
    v = register_parameter("v", randn({a}) / std::sqrt(static_cast<real>(a)));
  }
  std::string name() const override { return "ConcatScore"; }
  std::string extra_repr() const override { return cat(query_size, ", ", key_size, ", ", W->out_features); }
  Variable score(const Variable& q, const Variable& k) override {
    // W [q; k] = W[:, :H_q] q + W[:, H_q:] k
    Variable Wq = slice(W->weight, 1, 0, query_size), Wk = slice(W->weight, 1, query_size, query_size + key_size);
    return tanh_scores(matmul(q, Wq, false, true), matmul(k, Wk, false, true), v);
  }
  std::shared_ptr<Linear> W;
  Variable v;
};

class AdditiveScore : public AttentionScore {
 public:
  explicit AdditiveScore(const ScoreOptions& o) : AttentionScore(o) {
    const int64_t a = width(o);
    W = register_module("W", std::make_shared<Linear>(query_size, a, /*bias=*/false));
    U = register_module("U", std::make_shared<Linear>(key_size, a, /*bias=*/true));
    v = register_parameter("v", randn({a}) / std::sqrt(static_cast<real>(a)));
  }
  std::string name() const override { return "AdditiveScore"; }
  std::string extra_repr() const override { return cat(query_size, ", ", key_size, ", ", W->out_features); }
  Variable score(const Variable& q, const Variable& k) override {
    return tanh_scores(W->forward(q), U->forward(k), v);  // v^T tanh(W q + U k + b)
  }
  std::shared_ptr<Linear> W, U;
  Variable v;
};
// [docs:end]

// [docs:cosine_mlp]
class CosineScore : public AttentionScore {
 public:
  explicit CosineScore(const ScoreOptions& o) : AttentionScore(o) {
    check(query_size == key_size, "CosineScore: expected query and key sizes to be equal, got ", query_size, " and ", key_size);
  }
  std::string name() const override { return "CosineScore"; }
  Variable score(const Variable& q, const Variable& k) override {
    const real eps = real(1e-8);
    Variable qn = q / sqrt(sum(q * q, -1, /*keepdim=*/true) + eps);  // unit length (B, T, H)
    Variable kn = k / sqrt(sum(k * k, -1, /*keepdim=*/true) + eps);  // (B, S, H)
    return dot_scores(qn, kn);                                          // in [-1, 1]
  }
};

class MLPScore : public AttentionScore {
 public:
  explicit MLPScore(const ScoreOptions& o) : AttentionScore(o) {
    const int64_t a = width(o);
    W1 = register_module("W1", std::make_shared<Linear>(query_size + key_size, a));
    W2 = register_module("W2", std::make_shared<Linear>(a, 1));
  }
  std::string name() const override { return "MLPScore"; }
  std::string extra_repr() const override { return cat(query_size, ", ", key_size, ", ", W1->out_features); }
  Variable score(const Variable& q, const Variable& k) override {
    // W1 [q; k] + b1, computed as W1q q + (W1k k + b1) and broadcast to (B, T, S, A)
    Variable Wq = slice(W1->weight, 1, 0, query_size), Wk = slice(W1->weight, 1, query_size, query_size + key_size);
    Variable hidden = relu(unsqueeze(matmul(q, Wq, false, true), 2) + unsqueeze(linear(k, Wk, W1->bias), 1));
    return squeeze(W2->forward(hidden), 3);  // (B, T, S, 1) -> (B, T, S)
  }
  std::shared_ptr<Linear> W1, W2;
};
// [docs:end]

// [docs:location]
// Luong et al.'s location score, a_t = softmax(W_a h_t): where to look comes from the query
// alone, not from comparing it with the keys. W_a has one row per source position, so a
// source may be at most max_positions long; a shorter one uses the first S rows.
class LocationScore : public AttentionScore {
 public:
  explicit LocationScore(const ScoreOptions& o) : AttentionScore(o) {
    const int64_t positions = o.max_positions;
    check(positions > 0, "LocationScore: expected max_positions > 0 (the longest source it scores), got ", positions);
    W = register_module("W", std::make_shared<Linear>(query_size, positions, /*bias=*/false));
  }
  std::string name() const override { return "LocationScore"; }
  bool compares_keys() const override { return false; }  // where to look comes from the query alone
  std::string extra_repr() const override { return cat(query_size, ", max_positions=", W->out_features); }
  Variable score(const Variable& q, const Variable& k) override {
    const int64_t S = k.size(1);
    check(S <= W->out_features, "LocationScore: the source has ", S, " positions, more than the ", W->out_features,
          " it was built for");
    return slice(W->forward(q), 2, 0, S);  // W_a h_t (B, T, max_positions) -> the first S (B, T, S)
  }
  std::shared_ptr<Linear> W;
};
// [docs:end]

}  // namespace

namespace {

// The hidden width A of the scores that have one, as the tool's --attention-size.
Option attention_size_option() {
  return integer_option("attention_size", 0, 0, 4096, "the hidden width A of the concat, additive and mlp scores "
                                                       "(0: the query's width, --hidden)");
}

}  // namespace

// One line per score: its class, its name, what it computes, and its own options.
SEQGRAD_REGISTER_SCORE(DotScore, "dot", "q . k")
SEQGRAD_REGISTER_SCORE(GeneralScore, "general", "q^T W k (Luong)")
SEQGRAD_REGISTER_SCORE(ConcatScore, "concat", "v^T tanh(W [q; k]) (Luong)", attention_size_option())
SEQGRAD_REGISTER_SCORE(AdditiveScore, "additive", "v^T tanh(W q + U k + b) (Bahdanau)", attention_size_option())
SEQGRAD_REGISTER_SCORE(ScaledDotScore, "scaled-dot", "q . k / sqrt(H) (the Transformer's)")
SEQGRAD_REGISTER_SCORE(CosineScore, "cosine", "q . k / (|q| |k|) (the Neural Turing Machine's)")
SEQGRAD_REGISTER_SCORE(MLPScore, "mlp", "w2^T relu(W1 [q; k] + b1) + b2", attention_size_option())
SEQGRAD_REGISTER_SCORE(LocationScore, "location", "(W q)_s, from the query alone (Luong)")

Registry<ScoreEntry>& scores() {
  static Registry<ScoreEntry> registry("attention score");
  return registry;
}

std::shared_ptr<AttentionScore> make_score(const std::string& name, const ScoreOptions& options) {
  const ScoreEntry& entry = scores().get(name);
  ScoreOptions o = options;
  o.settings = with_defaults(entry.options, o.settings);
  return entry.make(o);
}

std::shared_ptr<AttentionScore> make_score(const std::string& name, int64_t q, int64_t k, int64_t attention_size,
                                           int64_t max_positions) {
  return make_score(name, ScoreOptions(q, k).with_attention_size(attention_size).with_max_positions(max_positions));
}

// ================================================================================================
// The weighted sum

// [docs:soft_context]
Variable soft_context(const Variable& weights, const Variable& values) {
  check((weights.dim() == 2 || weights.dim() == 3) && values.dim() == 3 && values.size(0) == weights.size(0) &&
            values.size(1) == weights.size(-1),
        "soft_context: expected weights (B, S) or (B, T, S) and values (B, S, H), got ", weights.shape(), " and ",
        values.shape());
  // One query: (B, 1, S) @ (B, S, H) -> (B, 1, H) -> (B, H). T of them: (B, T, S) @ (B, S, H) -> (B, T, H).
  if (weights.dim() == 2) return squeeze(matmul(unsqueeze(weights, 1), values), 1);
  return matmul(weights, values);
}
// [docs:end]

// [docs:attend]
AttentionResult attend(const Variable& scores, const Variable& values, const Tensor& mask) {
  check(values.dim() == 3 && values.size(0) == scores.size(0) && values.size(1) == scores.size(-1),
        "attend: expected values of shape (", scores.size(0), ", ", scores.size(-1), ", H) for scores of shape ",
        scores.shape(), ", got ", values.shape());
  Tensor m = mask;
  if (m.defined() && scores.dim() == 3) m = unsqueeze(mask, 1);  // (B, 1, S): the same for every query
  AttentionResult r;
  r.weights = masked_softmax(scores, m, -1);    // (B, S) or (B, T, S)
  r.context = soft_context(r.weights, values);  // (B, H) or (B, T, H)
  return r;
}
// [docs:end]

namespace {

// [docs:sdpa]
// One block of queries against the keys it may see: q (..., Tb, HS), k (..., n, HS), v (..., n, HV),
// mask broadcasting to (..., Tb, n) -> the weights (..., Tb, n) and the context (..., Tb, HV).
AttentionResult attend_block(const Variable& q, const Variable& k, const Variable& v, const Tensor& mask,
                             real dropout_p) {
  // weights = masked_softmax(q k^T / sqrt(HS), mask): the scaling, the mask and the softmax in
  // one kernel (tensor/softmax.h), tested equal to that composition.
  Variable scores = matmul(q, k, false, /*trans_b=*/true);  // (..., Tb, n)
  AttentionResult r;
  r.weights = scaled_masked_softmax(scores, mask, 1 / std::sqrt(static_cast<real>(q.size(-1))));
  // Dropout on the weights, if any, drops whole (query, key) pairs; the weights returned are
  // those before it.
  r.context = matmul(dropout(r.weights, dropout_p, /*training=*/dropout_p > 0), v);  // (..., Tb, HV)
  return r;
}
// [docs:end]

// [docs:query_blocks]
// How many keys each query can see at all: visible[t] is one past the last key that query t may
// attend to in some leading entry of the mask (mask broadcasting to (..., T, S)). Keys from
// visible[t] on are masked for query t everywhere. A causal mask gives visible[t] = t + 1.
std::vector<int64_t> visible_keys(const Tensor& mask, int64_t T, int64_t S) {
  if (!mask.defined() || mask.dim() == 0 || S == 0 || mask.size(-1) != S) return std::vector<int64_t>(T, S);
  const int64_t rows = mask.dim() >= 2 ? mask.size(-2) : 1;  // T, or 1 when every query shares it
  if (rows != T && rows != 1) return std::vector<int64_t>(T, S);
  std::vector<int64_t> visible(static_cast<size_t>(rows), 0);  // per row of the mask
  const real* m = mask.data();
  for (int64_t row = 0; row < mask.numel() / S; ++row) {  // every (entry, query) row of the mask
    int64_t s = S;
    while (s > 0 && m[row * S + s - 1] != 0) --s;  // strip the masked keys at the end
    visible[row % rows] = std::max(visible[row % rows], s);
  }
  if (rows == 1) visible.assign(T, visible[0]);  // one row, shared by every query
  return visible;
}

// Queries [begin, end) see only keys [0, keys).
struct QueryBlock {
  int64_t begin, end, keys;
};

// The queries cut into count = min(8, T / block) blocks of ceil(T / count) rows (the last may be
// shorter), each with the keys its rows can see (at least 1, so a fully masked block still has
// a row of weights, all zero). One block of every query and key when the mask hides no block
// of keys, or count < 4: below that the products saved do not pay for the extra copies and
// graph nodes (bench/bench_attention.cpp).
std::vector<QueryBlock> query_blocks(const Tensor& mask, int64_t T, int64_t S, int64_t block) {
  const std::vector<QueryBlock> whole{{0, T, S}};
  if (block <= 0 || T < 4 * block) return whole;
  const int64_t count = std::min<int64_t>(8, T / block);
  block = (T + count - 1) / count;
  const std::vector<int64_t> visible = visible_keys(mask, T, S);
  std::vector<QueryBlock> blocks;
  bool skips = false;
  for (int64_t begin = 0; begin < T; begin += block) {
    const int64_t end = std::min(T, begin + block);
    const int64_t keys = std::max<int64_t>(1, *std::max_element(visible.begin() + begin, visible.begin() + end));
    blocks.push_back({begin, end, keys});
    skips = skips || keys < S;
  }
  return skips ? blocks : whole;
}

}  // namespace

AttentionResult scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& mask,
                                             real dropout_p, bool need_weights, int64_t query_block) {
  check(q.dim() >= 2 && k.dim() == q.dim() && v.dim() == q.dim() && q.size(-1) == k.size(-1) && k.size(-2) == v.size(-2),
        "scaled_dot_product_attention: expected q (..., T, HS), k (..., S, HS), v (..., S, HV), got ", q.shape(), ", ",
        k.shape(), ", ", v.shape());
  check(dropout_p >= 0 && dropout_p <= 1, "scaled_dot_product_attention: expected dropout_p in [0, 1], got ", dropout_p);
  const int64_t T = q.size(-2), S = k.size(-2);
  const std::vector<QueryBlock> blocks = query_blocks(mask, T, S, query_block);
  if (blocks.size() == 1) {  // every query against every key
    AttentionResult r = attend_block(q, k, v, mask, dropout_p);
    if (!need_weights) r.weights = Variable();
    return r;
  }
  // Block by block: queries [begin, end) against keys [0, keys). The scores of the keys past
  // `keys` would all be masked, so they, their products with v and their gradients are skipped.
  // (The mask is checked against the whole scores first, so that an error names their shape.)
  Shape scores = q.shape();  // (..., T, S)
  scores.back() = S;
  broadcast_shapes(mask.shape(), scores, "scaled_dot_product_attention: the mask against the scores");
  std::vector<Variable> contexts, weights;
  for (const QueryBlock& b : blocks) {
    Tensor m = mask;  // the mask's part for this block: its rows (if it has T) and first keys
    if (m.dim() >= 2 && m.size(-2) == T) m = slice(m, m.dim() - 2, b.begin, b.end);
    if (m.size(-1) == S) m = slice(m, m.dim() - 1, 0, b.keys);
    const AttentionResult r =
        attend_block(slice(q, -2, b.begin, b.end), b.keys < S ? slice(k, -2, 0, b.keys) : k,
                     b.keys < S ? slice(v, -2, 0, b.keys) : v, m, dropout_p);
    contexts.push_back(r.context);
    if (!need_weights) continue;
    Shape hidden = r.weights.shape();  // the skipped keys' weights, all 0
    hidden.back() = S - b.keys;
    weights.push_back(b.keys < S ? concat({r.weights, Variable(zeros(hidden))}, -1) : r.weights);
  }
  AttentionResult r;
  r.context = concat(contexts, -2);  // (..., T, HV)
  if (need_weights) r.weights = concat(weights, -2);  // (..., T, S)
  return r;
}
// [docs:end]

}  // namespace seqgrad::nn
