// tests/nn/test_checkpoint.cpp - safetensors checkpoints: round trips, metadata, strict and
// non-strict loading, the file as a third-party reader sees it, every corrupt-file case with
// its pinned message, and atomic writes that leave the previous checkpoint alone on failure.
#include "tests/test_util.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "io/json.h"
#include "io/safetensors.h"
#include "nn/core/checkpoint.h"
#include "nn/core/module.h"

using namespace seqgrad;
using seqgrad::testing::read_file;
using seqgrad::testing::TempDir;
using seqgrad::testing::write_file;
namespace fs = std::filesystem;

namespace {

// ================================================================================================
// Test models: a layer and a two-layer net with a buffer, defined here so the tests depend on
// nothing but Module itself.

class Affine : public nn::Module {
 public:
  Affine(int64_t in, int64_t out) {
    weight = register_parameter("weight", randn({out, in}));  // (out, in), as PyTorch's Linear
    bias = register_parameter("bias", randn({out}));
  }
  std::string name() const override { return "Affine"; }
  Variable forward(const Variable& x) override { return add(matmul(x, weight, false, /*trans_b=*/true), bias); }
  Variable weight, bias;
};

class Net : public nn::Module {
 public:
  explicit Net(int64_t hidden = 16) {
    fc1 = register_module("fc1", std::make_shared<Affine>(2, hidden));
    fc2 = register_module("fc2", std::make_shared<Affine>(hidden, 3));
    scale = register_buffer("scale", rand({3}));
  }
  std::string name() const override { return "Net"; }
  Variable forward(const Variable& x) override { return mul(fc2->forward(tanh(fc1->forward(x))), Variable(scale)); }
  std::shared_ptr<Affine> fc1, fc2;
  Tensor scale;
};

// A parameter-only module with one child per name, for files that do not match Net.
class Head : public nn::Module {
 public:
  Head() { head = register_module("head", std::make_shared<Affine>(16, 3)); }
  std::string name() const override { return "Head"; }
  std::shared_ptr<Affine> head;
};

// ================================================================================================
// Files

std::string u64_le(uint64_t v) {
  std::string s(8, '\0');
  for (int k = 0; k < 8; ++k) s[k] = static_cast<char>(v >> (8 * k));
  return s;
}

std::string f32_le(const std::vector<float>& values) {
  std::string s;
  for (float f : values) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int k = 0; k < 4; ++k) s += static_cast<char>(bits >> (8 * k));
  }
  return s;
}

// A safetensors file from its parts; the length field is the header's size unless given.
std::string safetensors_bytes(const std::string& header, const std::string& data, std::optional<uint64_t> length = {}) {
  return u64_le(length.value_or(header.size())) + header + data;
}

// The message read_safetensors throws (as std::runtime_error) for a file holding `bytes`.
std::string read_error(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("bad.safetensors");
  write_file(path, bytes);
  try {
    io::read_safetensors(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

bool same_values(const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && a.to_vector() == b.to_vector(); }

}  // namespace

// ================================================================================================
// Round trips

TEST_CASE("checkpoint round trip: save, load into a fresh model, identical parameters and outputs") {
  TempDir dir;
  const std::string path = dir.file("net.safetensors");
  manual_seed(1);
  Net a;
  nn::save(a, path);
  manual_seed(2);
  Net b;
  REQUIRE_FALSE(same_values(a.fc1->weight.value(), b.fc1->weight.value()));

  // Handles taken before loading must see the loaded values: load copies in place.
  Variable w = b.fc1->weight;
  const real* storage_before = w.value().data();
  const std::map<std::string, std::string> metadata = nn::load(b, path);
  CHECK(metadata.empty());
  CHECK(w.value().data() == storage_before);
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    CHECK(pa[i].first == pb[i].first);
    CHECK(same_values(pa[i].second.value(), pb[i].second.value()));
  }
  CHECK(same_values(a.scale, b.scale));  // buffers travel too
  const Variable x(randn({5, 2}));
  CHECK(same_values(a.forward(x).value(), b.forward(x).value()));
  CHECK(dir.count_entries() == 1);  // no temporary file left behind
}

TEST_CASE("write_safetensors/read_safetensors keep order, scalars and empty tensors") {
  TempDir dir;
  const std::string path = dir.file("t.safetensors");
  const Tensor s = scalar(real(-2.5));
  const Tensor e = zeros({0, 3});
  const Tensor m = from_vector({1, 2, 3, 4, 5, 6}, {3, 2});
  io::write_safetensors(path, {{"z_last_alphabetically", m}, {"scalar", s}, {"empty", e}});
  const io::SafetensorsFile f = io::read_safetensors(path);
  REQUIRE(f.tensors.size() == 3);
  CHECK(f.tensors[0].first == "z_last_alphabetically");
  CHECK(same_values(f.tensors[0].second, m));
  CHECK(f.tensors[1].first == "scalar");
  CHECK(f.tensors[1].second.shape() == Shape{});
  CHECK(f.tensors[1].second.item() == real(-2.5));
  CHECK(f.tensors[2].second.shape() == Shape{0, 3});
  CHECK(f.metadata.empty());
  // Overwriting an existing checkpoint replaces it.
  io::write_safetensors(path, {{"only", ones({2})}});
  CHECK(io::read_safetensors(path).tensors.size() == 1);
}

TEST_CASE("metadata round trip: UTF-8, quotes, backslashes, control characters") {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  const std::map<std::string, std::string> metadata = {
      {"d_model", "64"},
      {"vocab_zh", "\xe4\xbd\xa0\xe5\xa5\xbd \xe4\xb8\x96\xe7\x95\x8c"},  // 你好 世界
      {"emoji", "\xf0\x9f\x98\x80"},
      {"tricky", std::string("\"quoted\" back\\slash\nnew line\ttab \x01 nul:") + '\0' + "end"},
      {"", "empty key"},
      {"empty value", ""},
      {"json", R"({"nested": ["not", "parsed"]})"},
  };
  manual_seed(3);
  Net a;
  nn::save(a, path, metadata);
  CHECK(io::read_metadata(path) == metadata);
  CHECK(io::read_safetensors(path).metadata == metadata);
  Net b;
  CHECK(nn::load(b, path) == metadata);
}

// ================================================================================================
// Loading into a model that does not match

TEST_CASE("strict load lists every missing, unexpected and mis-shaped name, and changes nothing") {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  io::write_safetensors(path, {{"fc1.weight", randn({32, 2})},
                               {"fc1.bias", randn({16})},
                               {"scale", rand({3})},
                               {"head.weight", randn({3, 16})}});
  Net net(16);
  const Tensor bias_before = net.fc1->bias.value().clone();
  const std::string expected = "load: checkpoint '" + path +
                               "' does not match the model: missing: fc2.weight, fc2.bias; unexpected: head.weight; "
                               "shape mismatch: fc1.weight expected [16, 2], got [32, 2]";
  CHECK_THROWS_WITH_AS(nn::load(net, path), expected.c_str(), std::runtime_error);
  CHECK(same_values(net.fc1->bias.value(), bias_before));  // fc1.bias matched, but nothing is copied

  // Not strict: shapes must still agree.
  const std::string shapes_only =
      "load: checkpoint '" + path +
      "' does not match the model: shape mismatch: fc1.weight expected [16, 2], got [32, 2]";
  CHECK_THROWS_WITH_AS(nn::load(net, path, /*strict=*/false), shapes_only.c_str(), std::runtime_error);
}

TEST_CASE("load refuses a NaN or an infinity in any tensor, naming it, and changes nothing") {
  // They made every translation empty and every score -inf, and eval report bleu=0, exit 0.
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  Net good(16);
  for (const real bad : {std::numeric_limits<real>::quiet_NaN(), std::numeric_limits<real>::infinity(),
                         -std::numeric_limits<real>::infinity()}) {
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const auto& [name, p] : good.named_parameters()) tensors.emplace_back(name, p.value().clone());
    for (const auto& [name, b] : good.named_buffers()) tensors.emplace_back(name, b.clone());
    tensors[2].second.data()[5] = bad;  // fc2.weight
    io::write_safetensors(path, tensors);
    Net net(16);
    const Tensor before = net.fc2->weight.value().clone();
    const std::string value = std::isnan(bad) ? "nan" : bad > 0 ? "inf" : "-inf";
    const std::string expected = "load: checkpoint '" + path + "' tensor '" + tensors[2].first +
                                 "': expected finite values, got " + value + " at element 5 (saved from a run that diverged?)";
    CHECK_THROWS_WITH_AS(nn::load(net, path), expected.c_str(), std::runtime_error);
    CHECK_THROWS_WITH_AS(nn::load(net, path, /*strict=*/false), expected.c_str(), std::runtime_error);
    CHECK(same_values(net.fc2->weight.value(), before));
  }
}

TEST_CASE("load with an extra prefix skips that owner's tensors and stays strict about the model's") {
  // A resume file: the model's tensors and the optimizer's buffers under "optimizer.".
  TempDir dir;
  const std::string path = dir.file("m.resume.safetensors");
  Net good(16);
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, p] : good.named_parameters()) tensors.emplace_back(name, p.value());
  for (const auto& [name, b] : good.named_buffers()) tensors.emplace_back(name, b);
  tensors.emplace_back("optimizer.step", scalar(3));
  io::write_safetensors(path, tensors);
  Net net(16);
  nn::load(net, path, /*strict=*/true, "optimizer.");
  CHECK(same_values(net.fc2->weight.value(), good.fc2->weight.value()));
  CHECK_THROWS_WITH_AS(nn::load(net, path), ("load: checkpoint '" + path +
                                             "' does not match the model: unexpected: optimizer.step").c_str(),
                       std::runtime_error);
  // A model tensor missing, and a name under no known owner: both still refused.
  tensors.erase(tensors.begin() + 2);  // fc2.weight
  tensors.emplace_back("head.weight", ones({2}));
  io::write_safetensors(path, tensors);
  CHECK_THROWS_WITH_AS(nn::load(net, path, /*strict=*/true, "optimizer."),
                       ("load: checkpoint '" + path +
                        "' does not match the model: missing: fc2.weight; unexpected: head.weight").c_str(),
                       std::runtime_error);
}

TEST_CASE("non-strict load copies what matches and ignores the rest") {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  manual_seed(4);
  Net a;
  Head extra;
  std::vector<std::pair<std::string, Tensor>> tensors = {{"fc1.weight", a.fc1->weight.value()},
                                                         {"fc1.bias", a.fc1->bias.value()}};
  for (const auto& [name, p] : extra.named_parameters()) tensors.emplace_back(name, p.value());
  io::write_safetensors(path, tensors, {{"note", "partial"}});

  Net b;
  const Tensor fc2_before = b.fc2->weight.value().clone();
  CHECK_THROWS_AS(nn::load(b, path), std::runtime_error);  // strict by default
  CHECK(nn::load(b, path, /*strict=*/false) == std::map<std::string, std::string>{{"note", "partial"}});
  CHECK(same_values(b.fc1->weight.value(), a.fc1->weight.value()));
  CHECK(same_values(b.fc1->bias.value(), a.fc1->bias.value()));
  CHECK(same_values(b.fc2->weight.value(), fc2_before));  // not in the file: untouched
}

// ================================================================================================
// The file as a third-party reader (PyTorch's safetensors) sees it

TEST_CASE("a saved checkpoint reads byte for byte as the safetensors format specifies") {
  TempDir dir;
  const std::string path = dir.file("net.safetensors");
  manual_seed(5);
  Net net;
  nn::save(net, path, {{"format", "pt"}, {"d_model", "16"}});
  const std::string bytes = read_file(path);

  // 8 bytes: the header length N, unsigned little-endian.
  REQUIRE(bytes.size() >= 8);
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[k])) << (8 * k);
  REQUIRE(8 + n <= bytes.size());
  CHECK(n % 8 == 0);  // padded with spaces so the data is 8-byte aligned
  const std::string header_text = bytes.substr(8, n);
  CHECK(header_text.front() == '{');  // the reference reader insists on this
  const size_t last = header_text.find_last_not_of(' ');
  CHECK(header_text[last] == '}');

  // N bytes of JSON: __metadata__ (strings) and one entry per tensor.
  const io::Json header = io::parse_json(header_text);
  REQUIRE(header.is_object());
  const io::Json* meta = header.find("__metadata__");
  REQUIRE(meta != nullptr);
  CHECK(meta->find("format")->as_string() == "pt");
  CHECK(meta->find("d_model")->as_string() == "16");

  // The data section: each tensor's float32 values, little-endian, at its data_offsets,
  // back to back in the order of the model's parameters and then buffers.
  const std::string data = bytes.substr(8 + n);
  std::vector<std::pair<std::string, Tensor>> expected;
  for (const auto& [name, p] : net.named_parameters()) expected.emplace_back(name, p.value());
  for (const auto& [name, b] : net.named_buffers()) expected.emplace_back(name, b);
  CHECK(header.size() == expected.size() + 1);
  int64_t offset = 0;
  for (const auto& entry : expected) {
    const std::string& name = entry.first;
    const Tensor& t = entry.second;
    CAPTURE(name);
    const io::Json* info = header.find(name);
    REQUIRE(info != nullptr);
    CHECK(info->find("dtype")->as_string() == "F32");
    Shape shape;
    for (const io::Json& s : info->find("shape")->as_array()) shape.push_back(s.as_int64());
    CHECK(shape == t.shape());
    const io::Json::Array& offsets = info->find("data_offsets")->as_array();
    REQUIRE(offsets.size() == 2);
    CHECK(offsets[0].as_int64() == offset);
    CHECK(offsets[1].as_int64() == offset + 4 * t.numel());
    for (int64_t i = 0; i < t.numel(); ++i) {
      uint32_t bits = 0;
      for (int k = 0; k < 4; ++k)
        bits |= static_cast<uint32_t>(static_cast<unsigned char>(data[static_cast<size_t>(offset + 4 * i + k)]))
                << (8 * k);
      float value;
      std::memcpy(&value, &bits, 4);
      CHECK(value == static_cast<float>(t.data()[i]));
    }
    offset += 4 * t.numel();
  }
  CHECK(static_cast<size_t>(offset) == data.size());  // the tensors cover the data exactly
}

TEST_CASE("files from other writers: no padding, keys out of data order, metadata last") {
  // As another writer might produce it: offsets tile the data, but the keys are listed in a
  // different order from the bytes. The reference reader accepts this, so we do too.
  TempDir dir;
  const std::string header = R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                             R"("a":{"shape":[1,2],"data_offsets":[0,8],"dtype":"F32"},"__metadata__":{"k":"v"}})";
  const std::string path = dir.file("other.safetensors");
  write_file(path, safetensors_bytes(header, f32_le({1, 2, 3, 4})));
  const io::SafetensorsFile f = io::read_safetensors(path);
  REQUIRE(f.tensors.size() == 2);
  CHECK(f.tensors[0].first == "b");
  CHECK(f.tensors[0].second.to_vector() == std::vector<real>{3, 4});
  CHECK(f.tensors[1].first == "a");
  CHECK(f.tensors[1].second.shape() == Shape{1, 2});
  CHECK(f.tensors[1].second.to_vector() == std::vector<real>{1, 2});
  CHECK(f.metadata == std::map<std::string, std::string>{{"k", "v"}});
}

TEST_CASE("PyTorch's I64 tensors read as reals, exactly or not at all") {
  // safetensors.torch.save_file(model.state_dict()) keeps BatchNorm's num_batches_tracked as a
  // 0-d I64: such a file must load into BatchNorm2d, whose buffer is a real.
  TempDir dir;
  auto i64_le = [](const std::vector<int64_t>& values) {
    std::string bytes;
    for (int64_t v : values) bytes += u64_le(static_cast<uint64_t>(v));
    return bytes;
  };
  const std::string path = dir.file("bn.safetensors");
  const std::string header = R"({"weight":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("bias":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                             R"("running_mean":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},)"
                             R"("running_var":{"dtype":"F32","shape":[2],"data_offsets":[24,32]},)"
                             R"("num_batches_tracked":{"dtype":"I64","shape":[],"data_offsets":[32,40]}})";
  write_file(path, safetensors_bytes(header, f32_le({1, 2, 0, 0, 0.5f, -0.5f, 1, 2}) + i64_le({37})));
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(2));
  nn::load(bn, path);
  CHECK(bn.num_batches_tracked.shape() == Shape{});
  CHECK(bn.num_batches_tracked.item() == 37);
  CHECK(bn.running_mean.to_vector() == std::vector<real>{0.5, -0.5});

  // Any shape; negative values; the largest magnitudes a real holds exactly.
  const int64_t exact = int64_t(1) << std::numeric_limits<real>::digits;
  const std::string ints = dir.file("ints.safetensors");
  write_file(ints, safetensors_bytes(R"({"i":{"dtype":"I64","shape":[2,2],"data_offsets":[0,32]}})",
                                     i64_le({0, -3, exact, -exact})));
  const io::SafetensorsFile f = io::read_safetensors(ints);
  CHECK(f.tensors[0].second.shape() == Shape{2, 2});
  CHECK(f.tensors[0].second.to_vector() == std::vector<real>{0, -3, static_cast<real>(exact), -static_cast<real>(exact)});

  // One more would be rounded: an error, naming the element and the range.
  const std::string where = "read_safetensors: '" + dir.file("bad.safetensors") + "': ";
  CHECK(read_error(dir, safetensors_bytes(R"({"i":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})",
                                          i64_le({5, exact + 1}))) ==
        where + "tensor 'i': I64 element 1 is " + std::to_string(exact + 1) + ", which " + kRealName +
            " cannot hold exactly; expected a value from " + std::to_string(-exact) + " to " + std::to_string(exact));
  // An I64's 8 bytes per element are what data_offsets must cover.
  CHECK(read_error(dir, safetensors_bytes(R"({"i":{"dtype":"I64","shape":[2],"data_offsets":[0,8]}})", i64_le({5}))) ==
        where + "tensor 'i': data_offsets [0, 8] do not fit shape [2]; expected 16 bytes, got 8");
}

// ================================================================================================
// Corrupt files: each a clear std::runtime_error naming the file and the problem

TEST_CASE("corrupt files: truncated, wrong lengths, not JSON, not safetensors") {
  TempDir dir;
  const std::string where = "read_safetensors: '" + dir.file("bad.safetensors") + "': ";
  const std::string w = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

  CHECK(read_error(dir, "") == where + "too short for a safetensors file; expected at least 8 bytes, got 0");
  CHECK(read_error(dir, "12345") == where + "too short for a safetensors file; expected at least 8 bytes, got 5");
  CHECK(read_error(dir, safetensors_bytes(w, f32_le({1, 2}), 1000)) ==
        where +
            "the header length runs past the end of the file (truncated, or not a safetensors file?); "
            "expected at most 62, got 1000");
  // A text file (an SVG, a corpus) where a checkpoint was expected is named as text, not as a
  // header length of 2338328219631577204.
  CHECK(read_error(dir, "this is a text file, not a checkpoint") ==
        where + "not a safetensors file: it starts with text ('this is '); expected a checkpoint, which starts with "
                "the 8-byte length of its header");
  CHECK(read_error(dir, safetensors_bytes("hello, world", "")) ==
        where + "cannot parse the header: json: expected a value at byte 0, got 'h'");
  CHECK(read_error(dir, safetensors_bytes(R"({"w": {"dtype": "F32",)", "")) ==
        where + "cannot parse the header: json: expected a string key at byte 22, got end of input");
  CHECK(read_error(dir, safetensors_bytes("", "")) ==
        where + "cannot parse the header: json: expected a value at byte 0, got end of input");
  CHECK(read_error(dir, safetensors_bytes("[1, 2]", "")) ==
        where + "expected the header to be a JSON object, got array");
  CHECK(read_error(dir, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                          R"("w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                                          f32_le({1, 2, 3, 4}))) ==
        where + "cannot parse the header: json: duplicate key \"w\" at byte 54");

  // A valid file cut short anywhere: in the length, in the header, or in the data.
  const std::string good = safetensors_bytes(w, f32_le({1, 2}));
  CHECK(read_error(dir, good.substr(0, good.size() - 1)) ==
        where +
            "tensor 'w': data_offsets [0, 8] run past the end of the data section (truncated file?); "
            "expected end <= 7, got 8");
  for (size_t n = 0; n < good.size(); ++n) CHECK(read_error(dir, good.substr(0, n)) != "(no error)");
  CHECK(read_error(dir, good) == "(no error)");
}

TEST_CASE("corrupt files: bad entries, dtypes, shapes and offsets") {
  TempDir dir;
  const std::string where = "read_safetensors: '" + dir.file("bad.safetensors") + "': ";
  const auto entry = [](const std::string& fields) { return R"({"w":{)" + fields + "}}"; };
  const std::string data8 = f32_le({1, 2});

  CHECK(read_error(dir, safetensors_bytes(R"({"w": 5})", "")) ==
        where + "tensor 'w': expected an object with dtype, shape and data_offsets, got number");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2])"), data8)) ==
        where + "tensor 'w': missing field 'data_offsets'");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("shape":[2],"data_offsets":[0,8])"), data8)) ==
        where + "tensor 'w': missing field 'dtype'");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F16","shape":[4],"data_offsets":[0,8])"), data8)) ==
        where + "tensor 'w': expected dtype F32 or I64, got F16");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":32,"shape":[2],"data_offsets":[0,8])"), data8)) ==
        where + "tensor 'w': expected dtype F32 or I64, got 32");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2,3],"data_offsets":[0,8])"), data8)) ==
        where + "tensor 'w': data_offsets [0, 8] do not fit shape [2, 3]; expected 24 bytes, got 8");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[-2],"data_offsets":[0,8])"), data8)) ==
        where + "tensor 'w': expected shape to be a list of non-negative integers, got [-2]");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2.0],"data_offsets":[0,8])"), data8)) ==
        where + "tensor 'w': expected shape to be a list of non-negative integers, got [2.0]");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":"2","data_offsets":[0,8])"), data8)) ==
        where + "tensor 'w': expected shape to be a list of non-negative integers, got \"2\"");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2],"data_offsets":[0,8.5])"), data8)) ==
        where + "tensor 'w': expected data_offsets to be two non-negative integers [begin, end], got [0,8.5]");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2],"data_offsets":[-8,0])"), data8)) ==
        where + "tensor 'w': expected data_offsets to be two non-negative integers [begin, end], got [-8,0]");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2],"data_offsets":[0,8,16])"), data8)) ==
        where + "tensor 'w': expected data_offsets to be two non-negative integers [begin, end], got [0,8,16]");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2],"data_offsets":[8,0])"), data8)) ==
        where + "tensor 'w': data_offsets are out of order; expected begin <= end, got [8, 0]");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[4],"data_offsets":[0,16])"), data8)) ==
        where +
            "tensor 'w': data_offsets [0, 16] run past the end of the data section (truncated file?); "
            "expected end <= 8, got 16");
  CHECK(read_error(dir, safetensors_bytes(entry(R"("dtype":"F32","shape":[2],"data_offsets":[0,99999999999999999999])"),
                                          data8)) ==
        where + "tensor 'w': expected data_offsets to be two non-negative integers [begin, end], got [0,1e+20]");
  // Sizes whose product overflows must not wrap around to something that fits.
  CHECK(read_error(dir, safetensors_bytes(
                            entry(R"("dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0])"), "")) ==
        where + "tensor 'w': shape [4294967296,4294967296,0] has too many elements");
  CHECK(read_error(dir, safetensors_bytes(R"({"__metadata__":{"epochs":10}})", "")) ==
        where + "expected __metadata__ values to be strings, got number for 'epochs'");
  CHECK(read_error(dir, safetensors_bytes(R"({"__metadata__":["a"]})", "")) ==
        where + "expected __metadata__ to be an object of strings, got array");
}

TEST_CASE("corrupt files: overlapping offsets, gaps and bytes that belong to no tensor") {
  TempDir dir;
  const std::string where = "read_safetensors: '" + dir.file("bad.safetensors") + "': ";
  const auto two = [](const std::string& a, const std::string& b) {
    return R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)" + a +
           R"(},"b":{"dtype":"F32","shape":[2],"data_offsets":)" + b + "}}";
  };
  CHECK(read_error(dir, safetensors_bytes(two("[0,8]", "[4,12]"), f32_le({1, 2, 3}))) ==
        where + "tensors 'a' and 'b' overlap: data_offsets [0, 8] and [4, 12]");
  CHECK(read_error(dir, safetensors_bytes(two("[0,8]", "[0,8]"), f32_le({1, 2}))) ==
        where + "tensors 'a' and 'b' overlap: data_offsets [0, 8] and [0, 8]");
  CHECK(read_error(dir, safetensors_bytes(two("[0,8]", "[12,20]"), f32_le({1, 2, 3, 4, 5}))) ==
        where + "the data section has a gap before tensor 'b'; expected it to begin at byte 8, got 12");
  CHECK(read_error(dir, safetensors_bytes(two("[4,12]", "[12,20]"), f32_le({1, 2, 3, 4, 5}))) ==
        where + "the data section has a gap before tensor 'a'; expected it to begin at byte 0, got 4");
  CHECK(read_error(dir, safetensors_bytes(two("[0,8]", "[8,16]"), f32_le({1, 2, 3, 4, 5}))) ==
        where +
            "the data section has 4 bytes that belong to no tensor; expected the tensors to end at byte 20, got 16");
  CHECK(read_error(dir, safetensors_bytes(two("[0,8]", "[8,16]"), f32_le({1, 2, 3, 4}))) == "(no error)");
}

TEST_CASE("corrupt files: a huge name, a million-axis shape or a million tensors make a short message") {
  // A 2 MB tensor name made a 2 MB error line, a million-axis shape a 3 MB one.
  TempDir dir;
  const std::string name(2 << 20, 'n');
  const std::string long_name = read_error(dir, safetensors_bytes(
      "{\"" + name + "\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}", "xx"));
  CHECK(long_name.find("tensor '" + std::string(77, 'n') + "... (2097152 bytes)': expected dtype F32 or I64") !=
        std::string::npos);
  CHECK(long_name.size() < 300);
  std::string axes = "[1";
  for (int i = 1; i < 1000000; ++i) axes += ",1";
  axes += "]";
  const std::string many_axes = read_error(dir, safetensors_bytes(
      "{\"t\":{\"dtype\":\"F32\",\"shape\":" + axes + ",\"data_offsets\":[0,8]}}", std::string(8, '\0')));
  CHECK(many_axes.find("do not fit shape [1, 1, 1") != std::string::npos);
  CHECK(many_axes.size() < 300);
  // A file of a thousand tensors none of which the model has: ten names, then how many more.
  const std::string path = dir.file("many.safetensors");
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (int i = 0; i < 1000; ++i) tensors.emplace_back("extra" + std::to_string(i), ones({1}));
  io::write_safetensors(path, tensors);
  Net net(16);
  try {
    nn::load(net, path);
    FAIL("load accepted a file that matches nothing");
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    CHECK(message.find("unexpected: extra0, extra1, ") != std::string::npos);
    CHECK(message.find(" and 990 more") != std::string::npos);
    CHECK(message.size() < 400);
  }
}

TEST_CASE("corrupt files: a header length over the limit is refused before allocating") {
  // A sparse file just over 100 MB whose length field claims a 100,000,001-byte header.
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  write_file(path, u64_le(100'000'001));
  fs::resize_file(path, 100'000'016);
  CHECK_THROWS_WITH_AS(
      io::read_safetensors(path),
      ("read_safetensors: '" + path + "': the header is too long; expected at most 100000000 bytes, got 100000001")
          .c_str(),
      std::runtime_error);
}

TEST_CASE("corrupt files: random damage never crashes, and errors name the calling function") {
  TempDir dir;
  const std::string path = dir.file("net.safetensors");
  manual_seed(6);
  Net net;
  nn::save(net, path, {{"k", "v"}});
  const std::string good = read_file(path);
  std::mt19937 gen(7);
  int failures = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(gen() % 4);
    for (int k = 0; k < flips; ++k) {
      // Mostly the length and header, where a bad byte changes the structure.
      const size_t limit = gen() % 4 == 0 ? bytes.size() : std::min<size_t>(bytes.size(), 200);
      bytes[gen() % limit] = static_cast<char>(gen());
    }
    write_file(path, bytes);
    try {
      Net other;
      nn::load(other, path);
    } catch (const std::runtime_error&) {
      ++failures;
    }
  }
  CHECK(failures > 100);

  const std::string missing = dir.file("missing.safetensors");
  Net other;
  CHECK_THROWS_WITH_AS(nn::load(other, missing),
                       ("load: '" + missing + "': cannot read: No such file or directory").c_str(), std::runtime_error);
  CHECK_THROWS_WITH_AS(io::read_metadata(missing),
                       ("read_metadata: '" + missing + "': cannot read: No such file or directory").c_str(),
                       std::runtime_error);
  CHECK_THROWS_AS(io::read_safetensors(dir.path.string()), std::runtime_error);  // a directory
}

// ================================================================================================
// Writing: bad arguments, and failures that must leave the previous checkpoint alone

TEST_CASE("write_safetensors rejects names and metadata it cannot write") {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  CHECK_THROWS_WITH_AS(io::write_safetensors(path, {{"a", ones({1})}, {"a", ones({2})}}),
                       "write_safetensors: duplicate tensor name 'a'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(io::write_safetensors(path, {{"__metadata__", ones({1})}}),
                       "write_safetensors: '__metadata__' is reserved and cannot name a tensor", std::invalid_argument);
  CHECK_THROWS_WITH_AS(io::write_safetensors(path, {{"a", Tensor()}}), "write_safetensors: tensor 'a' is undefined",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(io::write_safetensors(path, {}, {{"k", "caf\xe9"}}),
                       "write_safetensors: a metadata value is not valid UTF-8 (bad byte at offset 3)",
                       std::invalid_argument);
  CHECK(dir.count_entries() == 0);  // arguments are checked before any file is created
}

TEST_CASE("a failed save leaves the previous checkpoint untouched and no temporary file") {
  TempDir dir;
  manual_seed(8);
  Net net;

  // A directory that does not exist: nothing can be created.
  const std::string nowhere = dir.file("no/such/dir/m.safetensors");
  CHECK_THROWS_WITH_AS(
      nn::save(net, nowhere),
      ("save: cannot create a temporary file next to '" + nowhere + "': No such file or directory").c_str(),
      std::runtime_error);

  // A directory at the path is refused before anything is written: it survives, no temp appears.
  const std::string occupied = dir.file("occupied");
  fs::create_directories(occupied + "/inside");
  CHECK_THROWS_WITH_AS(
      nn::save(net, occupied),
      ("save: cannot write '" + occupied + "': expected a regular file or a new name, got a directory").c_str(),
      std::runtime_error);
  CHECK(fs::is_directory(occupied + "/inside"));
  CHECK(dir.count_entries() == 1);
}

TEST_CASE("a device is refused, and a write that fails midway (as on a full disk) keeps the previous checkpoint") {
  TempDir dir;
  manual_seed(10);
  Net small(4), big(1024);  // about 600 bytes and 25 KB
  // Saving *to* a device is refused: the rename would replace /dev/full itself (as root).
  if (fs::exists("/dev/full")) {
    CHECK_THROWS_WITH_AS(nn::save(small, "/dev/full"),
                         "save: cannot write '/dev/full': expected a regular file or a new name, got a character device",
                         std::runtime_error);
    CHECK(fs::is_character_file("/dev/full"));
  }

  // A write that fails midway, as on a full disk: a child process saves under a file-size limit
  // (RLIMIT_FSIZE, with SIGXFSZ ignored as the tool ignores it), where a write past the limit
  // fails with EFBIG as a full disk's fails with ENOSPC.
  const std::string path = dir.file("m.safetensors");
  nn::save(small, path);
  const std::string before = read_file(path);
  const std::string report = seqgrad::testing::in_child_process([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit{4096, 4096};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::string("setrlimit failed");
    try {
      nn::save(big, path);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("saved");
  });
  CHECK(report == "save: cannot write '" + path + "': " + std::strerror(EFBIG));
  CHECK(read_file(path) == before);
  CHECK(dir.count_entries() == 1);  // the temporary file is gone
  Net restored(4);
  nn::load(restored, path);
  CHECK(same_values(restored.fc1->weight.value(), small.fc1->weight.value()));
}

TEST_CASE("an unwritable directory fails clearly and keeps the previous checkpoint") {
  TempDir dir;
  manual_seed(11);
  Net net;
  const std::string path = dir.file("m.safetensors");
  nn::save(net, path);
  const std::string before = read_file(path);
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  // Root writes through permission bits, so the check needs an ordinary user.
  const std::string probe = dir.file("probe");
  if (std::FILE* f = std::fopen(probe.c_str(), "wb")) {
    std::fclose(f);
    std::remove(probe.c_str());
    MESSAGE("skipped the permission check: this user can write into a read-only directory (root)");
  } else {
    manual_seed(12);
    Net other;
    CHECK_THROWS_WITH_AS(
        nn::save(other, path),
        ("save: cannot create a temporary file next to '" + path + "': Permission denied").c_str(),
        std::runtime_error);
    CHECK(read_file(path) == before);
  }
  fs::permissions(dir.path, fs::perms::owner_all);
  CHECK(dir.count_entries() == 1);
  // A directory nobody can write into, root included (sysfs takes no new files).
  if (fs::is_directory("/sys/kernel"))
    CHECK_THROWS_WITH_AS(nn::save(net, "/sys/kernel/m.safetensors"),
                         doctest::Contains("save: cannot create a temporary file next to '/sys/kernel/m.safetensors': "),
                         std::runtime_error);
}

TEST_CASE("a save that runs out of space mid-write keeps the previous checkpoint") {
  // The file-size limit (RLIMIT_FSIZE) makes writes past 64 KiB fail as a full disk would,
  // with EFBIG instead of ENOSPC; SIGXFSZ is ignored so the write returns an error instead.
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  manual_seed(9);
  Net small(4);
  nn::save(small, path);
  const std::string before = read_file(path);
  Net big(8192);  // about 40,000 parameters: 160 KB

  std::string error = "(no error)";
  rlimit old_limit{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  rlimit limit = old_limit;
  limit.rlim_cur = 64 * 1024;
  if (setrlimit(RLIMIT_FSIZE, &limit) == 0) {
    try {
      nn::save(big, path);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &old_limit);
  }
  signal(SIGXFSZ, old_handler);

  CHECK(error == "save: cannot write '" + path + "': File too large");
  CHECK(read_file(path) == before);
  CHECK(dir.count_entries() == 1);
  Net restored(4);
  nn::load(restored, path);
  CHECK(same_values(restored.fc1->weight.value(), small.fc1->weight.value()));
}
