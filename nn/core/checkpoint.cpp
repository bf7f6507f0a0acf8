// nn/core/checkpoint.cpp - save/load for Modules, on top of io/safetensors.h.
#include "nn/core/checkpoint.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/safetensors.h"
#include "tensor/check.h"

namespace seqgrad::nn {

void save(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, p] : module.named_parameters()) tensors.emplace_back(name, p.value());
  for (const auto& [name, b] : module.named_buffers()) tensors.emplace_back(name, b);
  io::write_safetensors(path, tensors, metadata, "save");
}

std::map<std::string, std::string> load(Module& module, const std::string& path, bool strict,
                                        const std::string& extra_prefix) {
  io::SafetensorsFile file = io::read_safetensors(path, "load");

  // The model's tensors: parameter values and buffers, as handles sharing their storage.
  std::vector<std::pair<std::string, Tensor>> targets;
  for (auto& [name, p] : module.named_parameters()) targets.emplace_back(name, p.value());
  for (auto& [name, b] : module.named_buffers()) targets.emplace_back(name, b);

  std::map<std::string, const Tensor*> in_file;
  for (const auto& [name, t] : file.tensors) in_file[name] = &t;
  std::set<std::string> in_model;
  std::vector<std::string> missing, unexpected, mismatched;
  std::vector<std::pair<Tensor, const Tensor*>> copies;  // (model tensor, file tensor)
  for (const auto& [name, t] : targets) {
    in_model.insert(name);
    const auto found = in_file.find(name);
    if (found == in_file.end()) {
      missing.push_back(name);
    } else if (found->second->shape() != t.shape()) {
      mismatched.push_back(cat(name, " expected ", t.shape(), ", got ", bounded(cat(found->second->shape()))));
    } else {
      copies.emplace_back(t, found->second);
    }
  }
  for (const auto& [name, t] : file.tensors)
    if (!in_model.count(name) && (extra_prefix.empty() || name.rfind(extra_prefix, 0) != 0)) unexpected.push_back(name);

  // One message with every problem: "missing: a, b; unexpected: c; shape mismatch: d ...".
  std::string problems;
  const auto add = [&](const char* label, const std::vector<std::string>& names) {
    if (names.empty()) return;
    problems += problems.empty() ? "" : "; ";
    problems += label;
    // At most ten names, each bounded: a hostile file may hold a million tensors, or long names.
    for (size_t i = 0; i < names.size() && i < 10; ++i) problems += (i == 0 ? ": " : ", ") + bounded(names[i]);
    if (names.size() > 10) problems += cat(" and ", names.size() - 10, " more");
  };
  if (strict) {
    add("missing", missing);
    add("unexpected", unexpected);
  }
  add("shape mismatch", mismatched);
  check_state(problems.empty(), "load: checkpoint '", path, "' does not match the model: ", problems);

  // A NaN or an infinity in a weight makes every output NaN or -inf, silently: a model saved
  // from a run that diverged, or a damaged file. Refused here, naming the first such value.
  for (const auto& [target, source] : copies) {
    const real* v = source->data();
    for (int64_t i = 0; i < source->numel(); ++i)
      if (!std::isfinite(v[i])) {
        std::string name;
        for (const auto& [n, t] : file.tensors)
          if (&t == source) name = n;
        check_state(false, "load: checkpoint '", path, "' tensor '", name, "': expected finite values, got ", v[i],
                    " at element ", i, " (saved from a run that diverged?)");
      }
  }

  for (auto& [target, source] : copies) target.copy_(*source);
  return std::move(file.metadata);
}

}  // namespace seqgrad::nn
