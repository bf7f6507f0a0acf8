// exercises/solutions/06_gru_cell/exercise.cpp - reference solution of exercise 06.
#include "exercise.h"

using namespace seqgrad;

Variable gru_step(const Variable& x, const Variable& h, const Variable& w_ih, const Variable& w_hh, const Variable& b_ih,
                  const Variable& b_hh) {
  const int64_t H = h.size(1);
  check(w_ih.dim() == 2 && w_ih.size(0) == 3 * H && w_hh.dim() == 2 && w_hh.size(0) == 3 * H && w_hh.size(1) == H,
        "gru_step: expected w_ih (3H, C) and w_hh (3H, H) with H = ", H, ", got ", w_ih.shape(), " and ",
        w_hh.shape());
  // The input's part of all three gates at once, as in nn::GRUCell.
  const std::vector<Variable> gx = chunk(matmul(x, w_ih, false, /*trans_b=*/true) + b_ih, 3, 1);  // 3 x (B, H)
  // The hidden state's part: r and z from one (B, 2H) product; the candidate's waits for r.
  const std::vector<Variable> w = chunk(w_hh, 3, 0);  // W_hr, W_hz, W_hn: (H, H) each
  const std::vector<Variable> b = chunk(b_hh, 3, 0);  // b_hr, b_hz, b_hn: (H) each
  const std::vector<Variable> gh =
      chunk(matmul(h, concat({w[0], w[1]}, 0), false, /*trans_b=*/true) + concat({b[0], b[1]}, 0), 2, 1);
  const Variable r = sigmoid(gx[0] + gh[0]);                                    // reset gate (B, H)
  const Variable z = sigmoid(gx[1] + gh[1]);                                    // update gate (B, H)
  const Variable n = tanh(gx[2] + matmul(r * h, w[2], false, /*trans_b=*/true) + b[2]);  // candidate
  return (1 - z) * n + z * h;
}
// Why PyTorch and cuDNN apply r after the product: then h W_hh^T is one (B, 3H) product that
// does not depend on r, computed for all three gates at once (and, across a whole layer, the
// gate arithmetic fuses into one kernel). Here the candidate's product must wait for r: two
// dependent products per step instead of one. The two forms train about equally well.
