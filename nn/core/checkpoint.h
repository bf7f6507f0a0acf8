// nn/core/checkpoint.h - saving and loading models as safetensors files.
//
// save()/load() map Module::named_parameters() and named_buffers() onto a safetensors file
// (io/safetensors.h), so a seqgrad checkpoint loads with `safetensors.torch.load_file` into a
// PyTorch model whose names match; the model's configuration and vocabularies travel as string
// pairs in the metadata. What this is not: optimizer state (examples/seqgrad/resume.h saves it
// beside the weights). Read next: io/safetensors.h, the file format.
#pragma once

#include <map>
#include <string>

#include "nn/core/module.h"

namespace seqgrad::nn {

// ================================================================================================
// Models

// Saves every parameter and buffer under its dotted name ("encoder.layers.0.linear1.weight").
//   save(model, "model.safetensors", {{"d_model", "64"}, {"vocab", vocab_json}});
void save(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata = {});

// Copies the file's tensors into the module's parameters and buffers in place, so Variables
// and optimizers that hold them stay valid, and returns the metadata. Strict (the default):
// the names must match exactly, and one std::runtime_error lists everything that does not:
//   load: checkpoint 'm.safetensors' does not match the model: missing: fc2.weight, fc2.bias;
//   unexpected: head.weight; shape mismatch: fc1.weight expected [16, 2], got [32, 2]
// Not strict: loads the names found in both and ignores the rest; shapes must still agree.
// `extra_prefix`: tensors of the file whose names start with it are another owner's (a resume
// file's "optimizer." buffers) and neither loaded nor unexpected; everything else stays strict.
// A NaN or an infinity in a tensor to be loaded is refused, naming it.
// Nothing is copied unless everything checks out.
std::map<std::string, std::string> load(Module& module, const std::string& path, bool strict = true,
                                        const std::string& extra_prefix = "");

}  // namespace seqgrad::nn
