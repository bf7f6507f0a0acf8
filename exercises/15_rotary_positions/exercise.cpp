// exercises/15_rotary_positions/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

Variable rotary(const Variable& x, int64_t offset) {
  // TODO(exercise 15): check C; build the (T, C / 2) tables of cos(p w_i) and sin(p w_i); rotate
  // every pair of x.value(); then make_result("rotary", y, {x}, ...) with a backward that
  // rotates dy back.
  (void)offset;
  return x;
}

// Given: the line that makes "rope" a positional encoding (nn/transformer/positional.h).
SEQGRAD_REGISTER_POSITIONAL(RotaryPositions, "rope", "q and k rotated pair by pair by position (exercise 15)")
