// nn/core/registry.h - the model's components found by name: attention scores, recurrent cells,
// positional encodings, model kinds, optimizers and learning-rate schedules. The machinery
// (Registry, Option, Settings, SEQGRAD_REGISTER) is io/registry.h's; here it is named in nn::.
//
// Each registry is declared beside its components (scores in nn/attention/attention.h, cells in
// nn/recurrent/rnn.h, ...); a component joins it with one line in its own file.
// Read next: nn/attention/attention.h (scores), nn/recurrent/rnn.h (cells), nn/decoding/model_kind.h (model kinds).
#pragma once

#include "io/registry.h"

namespace seqgrad::nn {

using seqgrad::article;
using seqgrad::choice_option;
using seqgrad::chosen_options;
using seqgrad::complete_settings;
using seqgrad::in_every_checkpoint;
using seqgrad::integer_option;
using seqgrad::join_names;
using seqgrad::number_option;
using seqgrad::Option;
using seqgrad::registration_problems;
using seqgrad::Registry;
using seqgrad::Settings;
using seqgrad::switch_option;
using seqgrad::with_defaults;

}  // namespace seqgrad::nn
