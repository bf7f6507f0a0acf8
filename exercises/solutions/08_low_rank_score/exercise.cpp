// exercises/solutions/08_low_rank_score/exercise.cpp - reference solution of exercise 08.
#include "exercise.h"

using namespace seqgrad;

LowRankScore::LowRankScore(int64_t q, int64_t k, int64_t r) : query_size(q), key_size(k), rank(r) {
  U = register_module("U", std::make_shared<nn::Linear>(q, r, /*bias=*/false));
  V = register_module("V", std::make_shared<nn::Linear>(k, r, /*bias=*/false));
}

Variable LowRankScore::forward(const Variable& query, const Variable& keys) {
  check(keys.dim() == 3 && keys.size(2) == key_size, "LowRankScore: expected keys (B, S, ", key_size, "), got ",
        keys.shape());
  check((query.dim() == 2 || query.dim() == 3) && query.size(-1) == query_size && query.size(0) == keys.size(0),
        "LowRankScore: expected a query (", keys.size(0), ", ", query_size, ") or (", keys.size(0), ", T, ",
        query_size, "), got ", query.shape());
  const bool one_query = query.dim() == 2;
  const Variable q = one_query ? unsqueeze(query, 1) : query;  // (B, T, H_q), T = 1 for one query
  const Variable uq = U->forward(q);                           // (B, T, r)
  const Variable vk = V->forward(keys);                        // (B, S, r)
  const Variable scores = matmul(uq, vk, false, /*trans_b=*/true);  // (U q) . (V k): (B, T, S)
  return one_query ? squeeze(scores, 1) : scores;
}
// Parameters: r (H_q + H_k) against H_q H_k; for H_q = H_k = 64 that is 128 r against 4096, so
// the factored form saves parameters up to r = 31 and stops at r = 32 (equal) and above. A
// rank-1 score is (u . q)(v . k): one direction in query space times one in key space, so the
// ranking of the keys is the same for every query (only its sign can flip).
