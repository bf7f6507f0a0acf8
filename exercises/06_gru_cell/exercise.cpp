// exercises/06_gru_cell/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

Variable gru_step(const Variable& x, const Variable& h, const Variable& w_ih, const Variable& w_hh, const Variable& b_ih,
                  const Variable& b_hh) {
  // Where you start: the plain RNN cell, which the GRU generalises. It does not even have the
  // right weight shapes (3H rows, not H).
  // TODO(exercise 06): the input's contribution splits into its r, z, n parts as in
  // nn::GRUCell. The hidden state's cannot be one (B, 3H) product any more: the candidate's
  // part needs r first. Cut w_hh and b_hh into their three gates (chunk(..., 3, 0)) and write
  // the four lines of exercise.h. Then answer in a comment: why do PyTorch and cuDNN put the
  // reset gate after the product?
  (void)x;
  (void)w_ih;
  (void)w_hh;
  (void)b_ih;
  (void)b_hh;
  return h;
}
