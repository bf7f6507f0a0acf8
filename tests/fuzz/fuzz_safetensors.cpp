// tests/fuzz/fuzz_safetensors.cpp - libFuzzer target: any bytes, read as a safetensors file.
//
// The reader treats files as hostile (nn/core/checkpoint.cpp). Here every input must end in one of
// two ways: a std::runtime_error (the documented error for a file that is not well-formed), or
// tensors and metadata that write back and read again unchanged, bit for bit. Anything else (a
// crash, a sanitizer report, another exception, a different round trip) is a finding.
// Run by `make fuzz` (tests/fuzz/run_fuzzers.sh); seeds in tests/fuzz/corpus/safetensors/.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "io/safetensors.h"

using namespace seqgrad;

namespace {

// A file of this process's own in the temporary directory (the reader takes a path).
std::string temp_path(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/seqgrad-fuzz-" + std::to_string(getpid()) + "-" + name;
}

bool same(const io::SafetensorsFile& a, const io::SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor &x = a.tensors[i].second, &y = b.tensors[i].second;
    if (a.tensors[i].first != b.tensors[i].first || x.shape() != y.shape()) return false;
    if (x.numel() > 0 && std::memcmp(x.data(), y.data(), sizeof(real) * static_cast<size_t>(x.numel())) != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string input = temp_path("input.safetensors"), copy = temp_path("copy.safetensors");
  if (std::FILE* f = std::fopen(input.c_str(), "wb")) {
    if (size > 0) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    std::abort();  // the temporary directory is not writable: nothing can be tested
  }
  io::SafetensorsFile file;
  try {
    file = io::read_safetensors(input);
  } catch (const std::runtime_error&) {
    return 0;  // a clean error
  }
  // A valid result: the header agrees with read_metadata, and the file survives a round trip.
  if (io::read_metadata(input) != file.metadata) std::abort();
  io::write_safetensors(copy, file.tensors, file.metadata);
  if (!same(file, io::read_safetensors(copy))) std::abort();
  return 0;
}
