// exercises/10_relative_positions - relative position biases in self-attention (chapters 8-9).
//
// Sinusoidal encodings give each token its ABSOLUTE position; attention then has to work out
// distances itself. A relative scheme (Shaw et al. 2018; the scalar form of T5) adds to every
// score a learned number that depends only on the distance s - t, clipped to [-K, K]:
//   scores[..., t, s] = q_t . k_s / sqrt(HS) + bias[clip(s - t, -K, K) + K]
//   weights = masked softmax(scores),  context = weights @ v
// q (..., T, HS), k and v (..., S, HS), bias (2K + 1), mask broadcastable to (..., T, S)
// (1 = masked, may be undefined). The bias must receive a gradient: build a (T, S) table of
// indices clip(s - t, -K, K) + K and gather bias with index_select (an autograd op).
#pragma once

#include "nn/attention/attention.h"
#include "seqgrad.h"

seqgrad::nn::AttentionResult relative_attention(const seqgrad::Variable& q, const seqgrad::Variable& k,
                                                const seqgrad::Variable& v, const seqgrad::Variable& bias, int64_t K,
                                                const seqgrad::Tensor& mask = seqgrad::Tensor());
