// io/safetensors.cpp - safetensors writing and reading.
//
// Bytes are assembled one at a time with shifts, so the files are little-endian on any host.
// The reader treats the file as hostile: every length and offset in it is checked against the
// real file size before anything is allocated or read, and every problem becomes an exception
// naming the file. File access uses C stdio because it reports *why* it failed (errno).
#include "io/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/json.h"
#include "io/utf8.h"
#include "tensor/check.h"

namespace seqgrad::io {

namespace {

// The bytes of one element of each dtype read; an I64 is read into a real only when the real
// holds it exactly, from -kExactInteger to kExactInteger (2^24 in float32, 2^53 in float64).
constexpr int64_t kF32Bytes = 4, kI64Bytes = 8;
constexpr int64_t kExactInteger = int64_t(1) << std::numeric_limits<real>::digits;
// Headers longer than this are refused before any allocation (the limit the reference
// implementation uses; real headers are kilobytes).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr const char* kMetadataKey = "__metadata__";

// ================================================================================================
// Little-endian bytes

void put_u64_le(unsigned char* out, uint64_t v) {
  for (int k = 0; k < 8; ++k) out[k] = static_cast<unsigned char>(v >> (8 * k));
}

uint64_t get_u64_le(const unsigned char* in) {
  uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>(in[k]) << (8 * k);
  return v;
}

// A float32 is stored as its IEEE-754 bit pattern, least significant byte first.
void put_f32_le(unsigned char* out, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  for (int k = 0; k < 4; ++k) out[k] = static_cast<unsigned char>(bits >> (8 * k));
}

float get_f32_le(const unsigned char* in) {
  uint32_t bits = 0;
  for (int k = 0; k < 4; ++k) bits |= static_cast<uint32_t>(in[k]) << (8 * k);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ================================================================================================
// Files

// A C stdio file, closed when it goes out of scope unless it was closed (and checked) first.
struct CFile {
  FILE* f = nullptr;
  ~CFile() {
    if (f) std::fclose(f);
  }
};

std::string os_reason() { return std::strerror(errno); }

// A JSON value for a message, cut short if a hostile file made it long.
std::string short_dump(const Json& value) { return bounded(value.dump()); }

// "[0, 128]", for messages.
std::string range_string(int64_t begin, int64_t end) { return cat('[', begin, ", ", end, ']'); }

// ================================================================================================
// Writing

// The header JSON, padded with spaces to a multiple of 8 bytes so the data section starts
// 8-byte aligned (as the reference implementation writes it).
std::string build_header(const char* op, const std::vector<std::pair<std::string, Tensor>>& tensors,
                         const std::map<std::string, std::string>& metadata) {
  const auto check_utf8 = [&](const std::string& s, const char* what) {
    size_t bad = 0;
    const bool ok = is_valid_utf8(s, &bad);
    check(ok, op, ": ", what, " is not valid UTF-8 (bad byte at offset ", bad, ")");
  };
  Json::Object header;
  if (!metadata.empty()) {
    Json::Object meta;
    for (const auto& [key, value] : metadata) {
      check_utf8(key, "a metadata key");
      check_utf8(value, "a metadata value");
      meta.emplace_back(key, Json(value));
    }
    header.emplace_back(kMetadataKey, Json(std::move(meta)));
  }
  std::set<std::string> names;
  int64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    check(name != kMetadataKey, op, ": '", kMetadataKey, "' is reserved and cannot name a tensor");
    check(names.insert(name).second, op, ": duplicate tensor name '", name, "'");
    check_utf8(name, "a tensor name");
    check(t.defined(), op, ": tensor '", name, "' is undefined");
    Json shape = Json::array();
    for (int64_t s : t.shape()) shape.push_back(s);
    Json::Object info;
    info.emplace_back("dtype", "F32");
    info.emplace_back("shape", std::move(shape));
    info.emplace_back("data_offsets", Json(Json::Array{Json(offset), Json(offset + kF32Bytes * t.numel())}));
    header.emplace_back(name, Json(std::move(info)));
    offset += kF32Bytes * t.numel();
  }
  std::string text = Json(std::move(header)).dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

void write_bytes(std::FILE* file, const char* op, const std::string& path, const void* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, file) != n)
    throw std::runtime_error(cat(op, ": cannot write '", path, "': ", os_reason()));
}

// The whole file into the temporary file write_file_atomic opened; it flushes, syncs and
// renames it into place, or removes it on any failure.
void write_file(const char* op, const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                const std::map<std::string, std::string>& metadata) {
  const std::string header = build_header(op, tensors, metadata);  // all argument checks first
  write_file_atomic(
      path,
      [&](std::FILE* file) {
        unsigned char length[8];
        put_u64_le(length, header.size());
        write_bytes(file, op, path, length, 8);
        write_bytes(file, op, path, header.data(), header.size());
        std::vector<unsigned char> bytes;
        for (const auto& [name, t] : tensors) {
          bytes.resize(static_cast<size_t>(kF32Bytes * t.numel()));
          const real* x = t.data();
          for (int64_t i = 0; i < t.numel(); ++i)
            put_f32_le(&bytes[static_cast<size_t>(kF32Bytes * i)], static_cast<float>(x[i]));
          write_bytes(file, op, path, bytes.data(), bytes.size());
        }
      },
      op);
}

// ================================================================================================
// Reading the header

// One tensor as the header describes it; offsets relative to the data section.
struct Entry {
  std::string name;
  Shape shape;
  int64_t begin = 0, end = 0;
  bool i64 = false;  // stored as I64 (read into real), else F32
};

struct Header {
  std::vector<Entry> entries;     // header order
  std::vector<size_t> by_offset;  // indices into entries, in data order
  std::map<std::string, std::string> metadata;
  int64_t data_start = 0;  // 8 + N
};

// Throws "op: 'path': problem...": every reading error names the file. (Called behind an `if`,
// so that messages are only formatted for files that are actually broken.)
template <class... Parts>
[[noreturn]] void corrupt(const char* op, const std::string& path, Parts&&... parts) {
  throw std::runtime_error(cat(op, ": '", path, "': ", std::forward<Parts>(parts)...));
}

void read_bytes(CFile& file, const char* op, const std::string& path, void* out, size_t n) {
  if (n == 0) return;
  if (std::fread(out, 1, n, file.f) != n)
    corrupt(op, path, "cannot read: ", std::ferror(file.f) ? os_reason() : "unexpected end of file");
}

// A JSON array of non-negative integers ("shape" and "data_offsets"), or false.
bool read_sizes(const Json& value, std::vector<int64_t>& out) {
  if (!value.is_array()) return false;
  out.clear();
  for (const Json& v : value.as_array()) {
    if (!v.is_integer() || v.as_int64() < 0) return false;
    out.push_back(v.as_int64());
  }
  return true;
}

Entry read_entry(const char* op, const std::string& path, const std::string& name, const Json& info,
                 int64_t data_size) {
  const std::string who = "tensor '" + bounded(name) + "': ";
  if (!info.is_object())
    corrupt(op, path, who, "expected an object with dtype, shape and data_offsets, got ", type_name(info.type()));
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (info.find(field) == nullptr) corrupt(op, path, who, "missing field '", field, "'");

  // F32, or I64: PyTorch keeps some buffers as integers (BatchNorm's num_batches_tracked), and
  // a state_dict saved with save_file keeps them so. They are read into real (see read_file).
  const Json& dtype = *info.find("dtype");
  if (!dtype.is_string() || (dtype.as_string() != "F32" && dtype.as_string() != "I64"))
    corrupt(op, path, who, "expected dtype F32 or I64, got ", dtype.is_string() ? dtype.as_string() : short_dump(dtype));

  Entry e;
  e.name = name;
  e.i64 = dtype.as_string() == "I64";
  const int64_t element_bytes = e.i64 ? kI64Bytes : kF32Bytes;
  if (!read_sizes(*info.find("shape"), e.shape))
    corrupt(op, path, who, "expected shape to be a list of non-negative integers, got ",
            short_dump(*info.find("shape")));
  std::vector<int64_t> offsets;
  if (!read_sizes(*info.find("data_offsets"), offsets) || offsets.size() != 2)
    corrupt(op, path, who, "expected data_offsets to be two non-negative integers [begin, end], got ",
            short_dump(*info.find("data_offsets")));
  e.begin = offsets[0];
  e.end = offsets[1];
  if (e.begin > e.end)
    corrupt(op, path, who, "data_offsets are out of order; expected begin <= end, got ", range_string(e.begin, e.end));
  if (e.end > data_size)
    corrupt(op, path, who, "data_offsets ", range_string(e.begin, e.end),
            " run past the end of the data section (truncated file?); expected end <= ", data_size, ", got ", e.end);

  // The bytes the shape needs. The product of the non-zero sizes must not overflow even when
  // a zero makes the element count 0, since Tensor multiplies the sizes in order.
  int64_t product = 1;
  bool has_zero = false;
  for (int64_t s : e.shape) {
    if (s == 0) {
      has_zero = true;
      continue;
    }
    if (product > std::numeric_limits<int64_t>::max() / element_bytes / s)
      corrupt(op, path, who, "shape ", short_dump(*info.find("shape")), " has too many elements");
    product *= s;
  }
  const int64_t numel = has_zero ? 0 : product;
  if (element_bytes * numel != e.end - e.begin)
    corrupt(op, path, who, "data_offsets ", range_string(e.begin, e.end), " do not fit shape ", bounded(cat(e.shape)), "; expected ",
            element_bytes * numel, " bytes, got ", e.end - e.begin);
  return e;
}

// Reads the length and the header, and checks every entry against the file size, so the data
// can then be read without further checks.
Header read_header(CFile& file, const char* op, const std::string& path) {
  std::error_code ec;
  const uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) corrupt(op, path, "cannot read: ", ec.message());
  file.f = std::fopen(path.c_str(), "rb");
  if (file.f == nullptr) corrupt(op, path, "cannot open: ", os_reason());

  if (file_size < 8) corrupt(op, path, "too short for a safetensors file; expected at least 8 bytes, got ", file_size);
  unsigned char length_bytes[8];
  read_bytes(file, op, path, length_bytes, 8);
  const uint64_t n = get_u64_le(length_bytes);
  // A real header length has zero high bytes; eight printable characters are a text file (an
  // SVG, a TSV corpus, a JSON file) given where a checkpoint was expected: say that, not "a
  // header length of 7813033009127781180".
  const bool starts_as_text = std::all_of(length_bytes, length_bytes + 8, [](unsigned char c) { return c >= 0x20 && c < 0x7F; });
  if (starts_as_text && n > file_size - 8)
    corrupt(op, path, "not a safetensors file: it starts with text ('", std::string(length_bytes, length_bytes + 8),
            "'); expected a checkpoint, which starts with the 8-byte length of its header");
  if (n > file_size - 8)
    corrupt(op, path, "the header length runs past the end of the file (truncated, or not a safetensors file?); ",
            "expected at most ", file_size - 8, ", got ", n);
  if (n > kMaxHeaderBytes)
    corrupt(op, path, "the header is too long; expected at most ", kMaxHeaderBytes, " bytes, got ", n);

  std::string text(static_cast<size_t>(n), '\0');
  read_bytes(file, op, path, text.data(), text.size());
  Json json;
  try {
    json = parse_json(text);
  } catch (const std::runtime_error& e) {
    corrupt(op, path, "cannot parse the header: ", e.what());
  }
  if (!json.is_object()) corrupt(op, path, "expected the header to be a JSON object, got ", type_name(json.type()));

  Header h;
  h.data_start = static_cast<int64_t>(8 + n);
  const int64_t data_size = static_cast<int64_t>(file_size) - h.data_start;
  for (const auto& [name, value] : json.as_object()) {
    if (name != kMetadataKey) {
      h.entries.push_back(read_entry(op, path, name, value, data_size));
      continue;
    }
    if (!value.is_object())
      corrupt(op, path, "expected __metadata__ to be an object of strings, got ", type_name(value.type()));
    for (const auto& [key, v] : value.as_object()) {
      if (!v.is_string())
        corrupt(op, path, "expected __metadata__ values to be strings, got ", type_name(v.type()), " for '", bounded(key), "'");
      h.metadata[key] = v.as_string();
    }
  }

  // In offset order the tensors must tile the data section exactly: each begins where the
  // previous one ended (a gap or an overlap means a corrupt header), the last ends at the end.
  for (size_t i = 0; i < h.entries.size(); ++i) h.by_offset.push_back(i);
  std::stable_sort(h.by_offset.begin(), h.by_offset.end(), [&](size_t a, size_t b) {
    const Entry &x = h.entries[a], &y = h.entries[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  int64_t covered = 0;
  for (size_t i = 0; i < h.by_offset.size(); ++i) {
    const Entry& e = h.entries[h.by_offset[i]];
    if (i > 0 && e.begin < covered) {
      const Entry& previous = h.entries[h.by_offset[i - 1]];
      corrupt(op, path, "tensors '", bounded(previous.name), "' and '", bounded(e.name), "' overlap: data_offsets ",
              range_string(previous.begin, previous.end), " and ", range_string(e.begin, e.end));
    }
    if (e.begin > covered)
      corrupt(op, path, "the data section has a gap before tensor '", bounded(e.name), "'; expected it to begin at byte ",
              covered, ", got ", e.begin);
    covered = e.end;
  }
  if (covered != data_size)
    corrupt(op, path, "the data section has ", data_size - covered,
            " bytes that belong to no tensor; expected the tensors to end at byte ", data_size, ", got ", covered);
  return h;
}

// ================================================================================================
// Reading the data

SafetensorsFile read_file(const char* op, const std::string& path) {
  CFile file;
  Header h = read_header(file, op, path);
  SafetensorsFile out;
  out.metadata = std::move(h.metadata);
  out.tensors.resize(h.entries.size());

  // The header checks made the offsets contiguous from 0, and the file position is at the
  // start of the data section, so reading in offset order is one sequential pass.
  std::vector<unsigned char> bytes;
  for (size_t i : h.by_offset) {
    const Entry& e = h.entries[i];
    bytes.resize(static_cast<size_t>(e.end - e.begin));  // bounded by the file size (checked)
    read_bytes(file, op, path, bytes.data(), bytes.size());
    Tensor t = Tensor::empty(e.shape);
    real* x = t.data();
    if (!e.i64)
      for (int64_t k = 0; k < t.numel(); ++k)
        x[k] = static_cast<real>(get_f32_le(&bytes[static_cast<size_t>(kF32Bytes * k)]));
    // An integer becomes a real only if the real holds it exactly: a count that came back
    // changed would be worse than an error.
    for (int64_t k = 0; e.i64 && k < t.numel(); ++k) {
      const int64_t v = static_cast<int64_t>(get_u64_le(&bytes[static_cast<size_t>(kI64Bytes * k)]));
      if (v < -kExactInteger || v > kExactInteger)
        corrupt(op, path, "tensor '", bounded(e.name), "': I64 element ", k, " is ", v, ", which ", kRealName,
                " cannot hold exactly; expected a value from ", -kExactInteger, " to ", kExactInteger);
      x[k] = static_cast<real>(v);
    }
    out.tensors[i] = {e.name, t};
  }
  return out;
}

}  // namespace

// ================================================================================================
// Public functions

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata, const char* op) {
  write_file(op, path, tensors, metadata);
}

SafetensorsFile read_safetensors(const std::string& path, const char* op) { return read_file(op, path); }

std::map<std::string, std::string> read_metadata(const std::string& path, const char* op) {
  CFile file;
  return read_header(file, op, path).metadata;
}

}  // namespace seqgrad::io
