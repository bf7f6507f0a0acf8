// data/corpus.cpp - the tab-separated corpus reader and writer.
#include "data/corpus.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "tensor/check.h"

namespace seqgrad::data {

std::vector<Pair> read_tsv(std::istream& in, const std::string& name) {
  std::vector<Pair> pairs;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    // Windows line ends, and any stray '\r' before them: text never ends in one, so that what
    // write_tsv writes reads back the same (the fuzzer in tests/fuzz/fuzz_tsv.cpp checks it).
    while (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank
    const size_t tab = line.find('\t');
    check_state(tab != std::string::npos, name, ":", number, ": expected 'source<TAB>target', found no tab");
    check_state(line.find('\t', tab + 1) == std::string::npos, name, ":", number,
                ": expected 'source<TAB>target', found more than one tab");
    pairs.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  check_state(!pairs.empty(), name, ": no sentence pairs (expected lines of 'source<TAB>target')");
  return pairs;
}

std::vector<Pair> read_tsv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check_state(in.good(), "cannot open '", path, "': ", std::strerror(errno));
  return read_tsv(in, path);
}

void write_tsv(std::ostream& out, const std::vector<Pair>& pairs) {
  for (const Pair& p : pairs) out << p.source << '\t' << p.target << '\n';
}

}  // namespace seqgrad::data
