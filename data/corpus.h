// data/corpus.h - reading and writing parallel corpora: one "source<TAB>target" pair per line.
//
// Files are UTF-8. Blank lines are skipped; trailing '\r's (Windows line ends) are removed. A
// line without exactly one tab, with an empty side, with invalid UTF-8 or a control character
// (a byte below 0x20 other than the tab, or 0x7F), a line longer than kMaxLineBytes, a file that
// cannot be read and a file with no pairs are errors that name the file and the line
// ("corpus.tsv:12: expected 'source<TAB>target', found no tab"), raised while reading, before
// any training starts. The input is read once, front to back, so it may be a pipe or a FIFO
// (`cat c.tsv | seqgrad train --train /dev/stdin`); a device such as /dev/zero is refused by
// read_tsv_file before it is read, and an endless line from a pipe ends at kMaxLineBytes. The text is not tokenised here: that is tokenizer.h's job, chosen per
// side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "data/tasks.h"

namespace seqgrad::data {

// What is wrong with one line of text, as every reader of lines checks it (the corpus reader,
// translate's input), or "" if nothing: "expected UTF-8 text, found byte 0xff at column 3",
// "expected text, found control character 0x01 at column 2" (a byte below 0x20 other than the
// tab, or 0x7F: it would become a token no vocabulary may hold). The caller names the line.
std::string text_line_problem(const std::string& line);

// One line of a corpus holds one sentence pair; a longer line is an error, not a memory hog.
constexpr size_t kMaxLineBytes = size_t{1} << 24;  // 16 MiB

// What a reader read, byte for byte: how many bytes and their 64-bit FNV-1a hash, so that a
// caller can tell later whether the file changed without reading it twice (a pipe is read once).
// FNV-1a tells a changed file from the same one; it is no defence against a forger.
struct Digest {
  uint64_t bytes = 0;
  uint64_t fnv1a = 14695981039346656037ull;  // the FNV offset basis
  void add(const char* data, size_t n);
  std::string text() const;  // "BYTES HHHHHHHHHHHHHHHH": the size and the hash in 16 hex digits
};

// `name` is used in error messages (the path, or "<stdin>"). `digest`, if given, is fed every
// byte read.
std::vector<Pair> read_tsv(std::istream& in, const std::string& name, Digest* digest = nullptr);
// A regular file, or a pipe or FIFO (read once); a folder or a device is refused, naming it:
//   "cannot read '/dev/zero': expected a file or a pipe, got a character device (save what it
//    gives to a file first)"
std::vector<Pair> read_tsv_file(const std::string& path, Digest* digest = nullptr);
void write_tsv(std::ostream& out, const std::vector<Pair>& pairs);

}  // namespace seqgrad::data
