// nn/decoding/model_kind.h - the sequence-to-sequence models a program can build by name, each with the
// options it takes.
//
// A model kind is what `seqgrad train --arch NAME` builds: "lstm", "gru-attn", "gnmt",
// "transformer", ... Each kind says which options it takes (given those chosen so far: a local
// attention window takes --window, global attention does not; a score brings its own), checks
// the rules between them, and builds the model. The model then trains itself (its own
// training_loss, encoder_decoder.h) and decodes through decoding.h, so a program that trains
// models needs no condition on a model's name and no cast to its class.
//
// A kind whose name holds "{cell}" is one kind per registered recurrent cell (nn/recurrent/rnn.h):
// "{cell}-attn" is "rnn-attn", "lstm-attn", "gru-attn", and "mgu-attn" as soon as a cell named
// "mgu" registers. Such a kind is one set of options for all its cells, and the cell brings its
// own (an IndRNN's --indrnn-clip) the way a score does: model_kind("indrnn-attn") is the
// "{cell}-attn" kind whose options function sees the cell's name in `chosen`, under "cell",
// and the kind's list takes cell_options(chosen). ("cell" is not an option: the model's name
// holds it, so a checkpoint's configuration does not repeat it.) Register a kind from its model's own file:
//   SEQGRAD_REGISTER_MODEL(ModelKind{"transformer", "the Transformer (Vaswani et al., 2017)",
//                                    transformer_options, transformer_check, build_transformer});
// Read first: nn/core/registry.h, encoder_decoder.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/decoding/encoder_decoder.h"
#include "nn/core/registry.h"

namespace seqgrad::nn {

// What every model is built with besides its options.
struct ModelContext {
  std::string name;           // the kind's name as asked for: "lstm-attn"
  int64_t src_vocab = 0, tgt_vocab = 0;
  int64_t max_len = 64;       // the longest source or output, in tokens
  std::string cell() const;   // a "{cell}" kind's cell: "lstm" for "lstm-attn"
};

struct ModelKind {
  std::string name, help;
  // The options taken, given `chosen`: the values of the options this function returned
  // before (start: none; a "{cell}" kind's also hold "cell", the cell its name asks for).
  // Called again as values come in, until the list stops growing.
  // With chosen = nullptr: every option the kind could ever take (for a program's flag list).
  std::function<std::vector<Option>(const Settings* chosen)> options;
  // The rules between options; throws a message naming the flags ("--dim (6) must be a
  // multiple of --heads (4)"). May be empty.
  std::function<void(const Settings& settings)> check;
  std::function<std::shared_ptr<EncoderDecoder>(const Settings& settings, const ModelContext& context)> build;
};
Registry<ModelKind>& model_kinds();

// Every name a model can be asked for, "{cell}" kinds expanded with every registered cell,
// in alphabetical order.
std::vector<std::string> model_names();
// The kind that builds `name`, or an error listing them all. For "lstm-attn", the "{cell}-attn"
// kind (its name stays "{cell}-attn") with "cell": "lstm" in what its options function sees.
const ModelKind& model_kind(const std::string& name);

// The options `kind` takes and their values: each found by `value` (which returns null for an
// option not set, and then the default is used), checked against its declaration. The
// message of a bad value names the option as `name_of` does (the tool: "--window"; a
// checkpoint: "'window_size'"). Returns the settings; `taken` gets the options themselves.
Settings resolve_options(const ModelKind& kind, const std::function<io::Json(const Option&)>& value,
                         const std::function<std::string(const Option&)>& name_of, std::vector<Option>* taken = nullptr);

// Shared options, for the kinds that take them.
Option layers_option();        // layers: encoder (and decoder) layers
Option hidden_option();        // hidden: a recurrent state's width
Option dim_option();           // dim: embedding width, the Transformer's model width
Option dropout_option();       // dropout
Option bidirectional_option(); // bidirectional: a recurrent encoder reads both ways
Option attention_option();     // attention: a registered score's name (attention.h)
// The options of the score chosen in `chosen` ("attention"), if it has been chosen yet; with
// chosen = nullptr, those of every registered score.
std::vector<Option> score_options(const Settings* chosen);
// The options of the cell in `chosen` ("cell", which model_kind puts there for a "{cell}"
// kind); with chosen = nullptr, those of every registered cell.
std::vector<Option> cell_options(const Settings* chosen);

#define SEQGRAD_REGISTER_MODEL(...) SEQGRAD_REGISTER(::seqgrad::nn::model_kinds(), __VA_ARGS__)

}  // namespace seqgrad::nn
