// data/corpus.cpp - the tab-separated corpus reader and writer.
#include "data/corpus.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/utf8.h"
#include "tensor/check.h"

namespace seqgrad::data {

// Does `side` hold anything but white space (the characters the space tokenizer splits at) and
// the word-start marker ▁ (U+2581, which byte-pair encoding reads as a space: a side of only
// markers has no tokens there)?
bool has_text(const std::string& side) {
  const std::string marker = "\xE2\x96\x81";
  for (size_t i = 0; i < side.size();) {
    if (side.compare(i, marker.size(), marker) == 0) {
      i += marker.size();
    } else if (std::string(" \t\n\r\f\v").find(side[i]) != std::string::npos) {
      ++i;
    } else {
      return true;
    }
  }
  return false;
}

std::vector<Pair> read_tsv(std::istream& in, const std::string& name) {
  std::vector<Pair> pairs;
  std::string line;
  int64_t number = 1;
  for (; std::getline(in, line); ++number) {
    // An editor's byte-order mark is not part of the text. Taken off every line, not only the
    // first (files joined with cat keep theirs), and every one a line starts with (a file saved
    // twice by a careless editor), so that no pair starts with one and what write_tsv writes
    // reads back the same.
    while (io::strip_byte_order_mark(line)) {
    }
    // Windows line ends, and any stray '\r' before them: text never ends in one, so that what
    // write_tsv writes reads back the same (the fuzzer in tests/fuzz/fuzz_tsv.cpp checks it).
    while (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank
    // Checked here, where the file and line are known, not by the checkpoint's JSON an epoch later.
    size_t bad = 0;
    if (!io::is_valid_utf8(line, &bad))
      check_state(false, name, ":", number, ": expected UTF-8 text, found byte 0x", std::hex,
                  static_cast<int>(static_cast<unsigned char>(line[bad])), std::dec, " at column ", bad + 1);
    const size_t tab = line.find('\t');
    check_state(tab != std::string::npos, name, ":", number, ": expected 'source<TAB>target', found no tab");
    check_state(line.find('\t', tab + 1) == std::string::npos, name, ":", number,
                ": expected 'source<TAB>target', found more than one tab");
    Pair p{line.substr(0, tab), line.substr(tab + 1)};
    check_state(has_text(p.source), name, ":", number, ": expected 'source<TAB>target', found an empty source");
    check_state(has_text(p.target), name, ":", number, ": expected 'source<TAB>target', found an empty target");
    pairs.push_back(std::move(p));
  }
  // A read error (a directory, a failing disk) ends getline early, like the end of the file.
  check_state(!in.bad(), name, ":", number, ": cannot read: ", errno ? std::strerror(errno) : "input/output error");
  check_state(!pairs.empty(), name, ": no sentence pairs (expected lines of 'source<TAB>target')");
  return pairs;
}

std::vector<Pair> read_tsv_file(const std::string& path) {
  std::error_code ec;
  check_state(!std::filesystem::is_directory(path, ec), "cannot read '", path, "': it is a directory");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  check_state(in.good(), "cannot open '", path, "': ", errno ? std::strerror(errno) : "unknown error");
  return read_tsv(in, path);
}

void write_tsv(std::ostream& out, const std::vector<Pair>& pairs) {
  for (const Pair& p : pairs) out << p.source << '\t' << p.target << '\n';
}

}  // namespace seqgrad::data
