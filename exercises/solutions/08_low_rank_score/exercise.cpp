// exercises/solutions/08_low_rank_score/exercise.cpp - reference solution of exercise 08.
#include "exercise.h"

using namespace seqgrad;

LowRankScore::LowRankScore(const nn::ScoreOptions& o) : nn::AttentionScore(o), rank(o.settings.integer("rank")) {
  U = register_module("U", std::make_shared<nn::Linear>(query_size, rank, /*bias=*/false));
  V = register_module("V", std::make_shared<nn::Linear>(key_size, rank, /*bias=*/false));
}

LowRankScore::LowRankScore(int64_t q, int64_t k, int64_t r)
    : LowRankScore(nn::ScoreOptions(q, k).with_settings(nn::Settings().set("rank", r))) {}

Variable LowRankScore::score(const Variable& q, const Variable& k) {
  const Variable uq = U->forward(q);                     // (B, T, r)
  const Variable vk = V->forward(k);                     // (B, S, r)
  return matmul(uq, vk, false, /*trans_b=*/true);        // (U q) . (V k): (B, T, S)
}

// One line makes it a score named "lowrank", with its own option --rank (default 16).
SEQGRAD_REGISTER_SCORE(LowRankScore, "lowrank", "(U q) . (V k): the general score with a rank-r W_a (exercise 08)",
                       nn::integer_option("rank", 16, 1, 4096, "the low-rank score's rank r"))
// Parameters: r (H_q + H_k) against H_q H_k; for H_q = H_k = 64 that is 128 r against 4096, so
// the factored form saves parameters up to r = 31 and stops at r = 32 (equal) and above. A
// rank-1 score is (u . q)(v . k): one direction in query space times one in key space, so the
// ranking of the keys is the same for every query (only its sign can flip).
