// tests/faults/fault_edit.cpp - breaks seqgrad checkpoints on purpose, for tests/faults/run_faults.sh.
//
//   fault_edit IN list                                  tensor names, shapes, metadata keys
//   fault_edit IN OUT set-meta KEY.PATH VALUE            one field inside a JSON metadata entry
//   fault_edit IN OUT drop-tensor NAME                   leave one tensor out
//   fault_edit IN OUT set-tensor-value NAME VALUE        every element := VALUE ("1e18", "-1", "nan")
//
// set-meta: KEY is a metadata key ("seqgrad.config", "seqgrad.train_state"; it may contain dots,
// the longest key that matches wins) and PATH a dotted path inside its JSON ("epoch",
// "flags.layers", "epochs.0"). VALUE is raw JSON text and is pasted in verbatim, so values JSON
// cannot express (NaN, 1e400, garbage) are possible too: a metadata entry is a string inside the
// header, so the file itself stays well-formed and only the entry's own JSON is broken.
// Reading and writing use the library (io/safetensors.h, io/json.h); OUT is written atomically.
// What this is not: a general checkpoint editor, or careful with its own input (it is a test tool).
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "io/safetensors.h"
#include "io/json.h"

using seqgrad::Tensor;
using seqgrad::io::Json;

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

const char* kPlaceholder = "@@fault_edit_value@@";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t end; (end = s.find(sep, begin)) != std::string::npos; begin = end + 1) parts.push_back(s.substr(begin, end - begin));
  parts.push_back(s.substr(begin));
  return parts;
}

// A copy of `node` whose member at path[i..] is `value`; every step of the path must exist.
Json with_path(const Json& node, const std::vector<std::string>& path, size_t i, const Json& value) {
  if (i == path.size()) return value;
  const std::string& step = path[i];
  if (node.is_object()) {
    const Json* child = node.find(step);
    if (child == nullptr) fail("no member '" + step + "' in the JSON");
    Json copy = node;
    copy.set(step, with_path(*child, path, i + 1, value));
    return copy;
  }
  if (node.is_array()) {
    char* end = nullptr;
    const unsigned long k = std::strtoul(step.c_str(), &end, 10);
    if (step.empty() || *end != '\0' || k >= node.size()) fail("no array index '" + step + "' in the JSON");
    Json::Array items = node.as_array();
    items[k] = with_path(items[k], path, i + 1, value);
    return Json(items);
  }
  fail("'" + step + "' looks into a " + std::string(seqgrad::io::type_name(node.type())) + ", not an object or array");
}

void set_meta(seqgrad::io::SafetensorsFile& f, const std::string& where, const std::string& raw) {
  std::string key;
  for (const auto& [k, v] : f.metadata)
    if (where.rfind(k + ".", 0) == 0 && k.size() > key.size()) key = k;
  if (key.empty()) fail("no metadata key is a prefix of '" + where + "'");
  const std::vector<std::string> path = split(where.substr(key.size() + 1), '.');
  const Json edited = with_path(seqgrad::io::parse_json(f.metadata[key]), path, 0, Json(kPlaceholder));
  std::string text = edited.dump();
  const std::string quoted = seqgrad::io::json_quote(kPlaceholder);
  text.replace(text.find(quoted), quoted.size(), raw);  // the raw VALUE, verbatim
  f.metadata[key] = text;
}

Tensor& tensor_named(seqgrad::io::SafetensorsFile& f, const std::string& name) {
  for (auto& [n, t] : f.tensors)
    if (n == name) return t;
  fail("no tensor named '" + name + "'");
}

void list(const seqgrad::io::SafetensorsFile& f) {
  for (const auto& [name, t] : f.tensors) {
    std::cout << "tensor " << name << " [";
    for (size_t i = 0; i < t.shape().size(); ++i) std::cout << (i ? ", " : "") << t.shape()[i];
    std::cout << "]" << (t.numel() == 1 ? " = " + std::to_string(t.data()[0]) : "") << "\n";
  }
  for (const auto& [key, value] : f.metadata) std::cout << "meta " << key << " = " << value << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  try {
    if (a.size() == 2 && a[1] == "list") return list(seqgrad::io::read_safetensors(a[0])), 0;
    if (a.size() < 4) fail("usage: fault_edit IN OUT (set-meta KEY.PATH VALUE | drop-tensor NAME | set-tensor-value NAME VALUE) | fault_edit IN list");
    seqgrad::io::SafetensorsFile f = seqgrad::io::read_safetensors(a[0]);
    const std::string& op = a[2];
    if (op == "set-meta" && a.size() == 5) {
      set_meta(f, a[3], a[4]);
    } else if (op == "drop-tensor" && a.size() == 4) {
      tensor_named(f, a[3]);  // must exist
      std::vector<std::pair<std::string, Tensor>> kept;
      for (auto& entry : f.tensors)
        if (entry.first != a[3]) kept.push_back(entry);
      f.tensors = kept;
    } else if (op == "set-tensor-value" && a.size() == 5) {
      char* end = nullptr;
      const double v = std::strtod(a[4].c_str(), &end);  // accepts "nan", "inf", "1e18"
      if (a[4].empty() || *end != '\0') fail("not a number: '" + a[4] + "'");
      tensor_named(f, a[3]).fill_(static_cast<seqgrad::real>(v));
    } else {
      fail("unknown operation or wrong number of arguments: '" + op + "'");
    }
    seqgrad::io::write_safetensors(a[1], f.tensors, f.metadata);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fault_edit: " << e.what() << "\n";
    return 1;
  }
}
