// tensor/vmath_generic.cpp - exp, sigmoid and tanh (tensor/vmath_lanes.h) in 8-lane vectors for
// the build's own target: the copy every machine can run.
#ifndef SEQGRAD_DOUBLE
#define SEQGRAD_VMATH_NAMESPACE vmath_generic
#define SEQGRAD_VMATH_BYTES 32
#include "tensor/vmath_lanes.h"
#endif
