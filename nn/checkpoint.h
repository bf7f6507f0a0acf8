// nn/checkpoint.h - saving and loading models as safetensors files.
//
// safetensors is the format PyTorch users exchange weights in, so a seqgrad checkpoint loads
// with `safetensors.torch.load_file` and a PyTorch state_dict saved with `save_file` (F32)
// loads here. save()/load() map Module::named_parameters() and named_buffers() onto the file;
// the model's configuration and vocabularies travel as string pairs in the metadata. Writes
// are atomic (temporary file, then rename); reads check every number in the header against
// the file before using it. What this is not: optimizer state, other dtypes (F16, BF16),
// memory mapping or lazy loading. Read next: json.h, which parses and writes the header.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "tensor/tensor.h"

namespace seqgrad::nn {

// ================================================================================================
// The file format
//
//   bytes 0..7         N, the header length: an unsigned 64-bit little-endian integer
//   bytes 8..8+N-1     the header: UTF-8 JSON, padded with spaces so that N % 8 == 0
//   bytes 8+N..end     the data section: every tensor's raw bytes, back to back
//
// The header is one JSON object:
//   {"__metadata__": {"epochs": "10", ...},                  (optional; strings only)
//    "fc1.weight": {"dtype": "F32", "shape": [16, 2], "data_offsets": [0, 128]},
//    "fc1.bias":   {"dtype": "F32", "shape": [16],    "data_offsets": [128, 192]}, ...}
// data_offsets are [begin, end) byte offsets into the data section. The tensors cover it
// exactly: no gaps, no overlaps. Values are row-major float32, little-endian. A 0-d tensor
// has shape [] and 4 bytes. seqgrad always writes F32 (a double-precision build converts).

// A whole file, read: the tensors in header order, and the metadata.
struct SafetensorsFile {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, std::string> metadata;
};

// Writes `tensors` (in this order) and `metadata` to `path`, atomically (io/atomic_file.h): the
// bytes go to a temporary file next to it that is flushed to disk and then renamed over `path`. On any
// failure (a full disk, an unwritable directory) the temporary file is removed, an existing
// file at `path` is left untouched, and a std::runtime_error names the path and the operating
// system's reason. A path holding something other than a regular file (a directory, a device
// such as /dev/full) is refused before anything is written. Names must be unique,
// valid UTF-8 and not "__metadata__" (std::invalid_argument otherwise).
//   write_safetensors("emb.safetensors", {{"weight", table}}, {{"format", "pt"}});
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Reads and checks a whole file. Anything that is not a well-formed safetensors file with F32
// tensors raises std::runtime_error naming the file and the problem:
//   read_safetensors: 'm.safetensors': tensor 'fc.weight': expected dtype F32, got F16
SafetensorsFile read_safetensors(const std::string& path);

// Only the metadata (the header is still checked in full; tensor data is not read).
std::map<std::string, std::string> read_metadata(const std::string& path);

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
// Nothing is copied unless everything checks out.
std::map<std::string, std::string> load(Module& module, const std::string& path, bool strict = true);

}  // namespace seqgrad::nn
