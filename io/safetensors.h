// io/safetensors.h - named tensors in a safetensors file, and back.
//
// safetensors is the format PyTorch users exchange weights in, so a file written here loads
// with `safetensors.torch.load_file`, and a PyTorch state_dict saved with `save_file` (F32,
// and I64 for integer buffers such as BatchNorm's num_batches_tracked) loads here. Metadata
// travels as string pairs. Writes are atomic (atomic_file.h); reads check every number in the
// header against the file before using it. What this is not: other dtypes (F16, BF16, F64),
// memory mapping or lazy loading. Read next: json.h, which parses and writes the
// header, and nn/core/checkpoint.h, which saves and loads a Module's parameters through this file.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad::io {

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
// has shape [] and 4 bytes. seqgrad always writes F32 (a double-precision build converts). It
// also reads I64 (8-byte little-endian integers) into reals, each of which must be one the
// real holds exactly: at most 2^24 in size in float32 (2^53 in float64), else an error.

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
// `op` starts every message (nn/core/checkpoint.h passes "save" and "load").
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {}, const char* op = "write_safetensors");

// Reads and checks a whole file. Anything that is not a well-formed safetensors file with F32
// tensors raises std::runtime_error naming the file and the problem:
//   read_safetensors: 'm.safetensors': tensor 'fc.weight': expected dtype F32, got F16
SafetensorsFile read_safetensors(const std::string& path, const char* op = "read_safetensors");

// Only the metadata (the header is still checked in full; tensor data is not read).
std::map<std::string, std::string> read_metadata(const std::string& path, const char* op = "read_metadata");

}  // namespace seqgrad::io
