// data/corpus.cpp - the tab-separated corpus reader and writer.
#include "data/corpus.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <sstream>

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

void Digest::add(const char* data, size_t n) {
  for (size_t k = 0; k < n; ++k) fnv1a = (fnv1a ^ static_cast<unsigned char>(data[k])) * 1099511628211ull;  // FNV prime
  bytes += n;
}

std::string Digest::text() const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a));
  return std::to_string(bytes) + " " + hex;
}

std::string text_line_problem(const std::string& line) {
  std::ostringstream problem;
  size_t bad = 0;
  if (!io::is_valid_utf8(line, &bad)) {
    problem << "expected UTF-8 text, found byte 0x" << std::hex << static_cast<int>(static_cast<unsigned char>(line[bad]))
            << std::dec << " at column " << bad + 1;
    return problem.str();
  }
  for (size_t k = 0; k < line.size(); ++k) {
    const unsigned char c = static_cast<unsigned char>(line[k]);
    if ((c < 0x20 && c != '\t') || c == 0x7F) {
      problem << "expected text, found control character 0x" << std::hex << std::setw(2) << std::setfill('0')
              << static_cast<int>(c) << std::dec << " at column " << k + 1;
      return problem.str();
    }
  }
  return "";
}

namespace {

// The lines of a stream, read in blocks of 64 KiB (not std::getline, which would grow a line
// without end on /dev/zero piped in): each block goes to the digest as it arrives, and a line
// is cut off, with an error, once it passes kMaxLineBytes or holds a NUL byte (never text).
class LineReader {
 public:
  LineReader(std::istream& in, const std::string& name, Digest* digest) : in_(in), name_(name), digest_(digest) {}

  // The next line without its '\n' (the last line may lack one); false at the end.
  bool next(std::string& line, int64_t number) {
    line.clear();
    bool any = false;
    for (;;) {
      if (pos_ == end_ && !fill()) return any;
      any = true;
      const char* start = buffer_ + pos_;
      const size_t available = end_ - pos_;
      const char* newline = static_cast<const char*>(std::memchr(start, '\n', available));
      const size_t take = newline ? static_cast<size_t>(newline - start) : available;
      const char* nul = static_cast<const char*>(std::memchr(start, '\0', take));
      if (nul)
        check_state(false, name_, ":", number, ": expected text, found a NUL byte at column ",
                    line.size() + static_cast<size_t>(nul - start) + 1);
      check_state(line.size() + take <= kMaxLineBytes, name_, ":", number, ": expected a line of at most ",
                  kMaxLineBytes >> 20, " MiB (one sentence pair), found a longer one");
      line.append(start, take);
      pos_ += take + (newline ? 1 : 0);
      if (newline) return true;
    }
  }

 private:
  bool fill() {
    if (!in_.good()) return false;
    in_.read(buffer_, sizeof buffer_);
    pos_ = 0;
    end_ = static_cast<size_t>(in_.gcount());
    if (digest_) digest_->add(buffer_, end_);
    return end_ > 0;
  }

  std::istream& in_;
  const std::string& name_;
  Digest* digest_;
  char buffer_[1 << 16];
  size_t pos_ = 0, end_ = 0;
};

}  // namespace

std::vector<Pair> read_tsv(std::istream& in, const std::string& name, Digest* digest) {
  std::vector<Pair> pairs;
  std::string line;
  int64_t number = 1;
  errno = 0;
  auto reader = std::make_unique<LineReader>(in, name, digest);  // (64 KiB: not on the stack)
  for (; reader->next(line, number); ++number) {
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
    const std::string problem = text_line_problem(line);
    check_state(problem.empty(), name, ":", number, ": ", problem);
    const size_t tab = line.find('\t');
    check_state(tab != std::string::npos, name, ":", number, ": expected 'source<TAB>target', found no tab");
    check_state(line.find('\t', tab + 1) == std::string::npos, name, ":", number,
                ": expected 'source<TAB>target', found more than one tab");
    Pair p{line.substr(0, tab), line.substr(tab + 1)};
    check_state(has_text(p.source), name, ":", number, ": expected 'source<TAB>target', found an empty source");
    check_state(has_text(p.target), name, ":", number, ": expected 'source<TAB>target', found an empty target");
    pairs.push_back(std::move(p));
  }
  // A read error (a directory, a failing disk) ends the reading early, like the end of the file.
  check_state(!in.bad(), name, ":", number, ": cannot read: ", errno ? std::strerror(errno) : "input/output error");
  check_state(!pairs.empty(), name, ": no sentence pairs (expected lines of 'source<TAB>target')");
  return pairs;
}

std::vector<Pair> read_tsv_file(const std::string& path, Digest* digest) {
  // Looked at before it is opened: opening a device may have effects, reading one may not end.
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  using std::filesystem::file_type;
  check_state(status.type() != file_type::directory, "cannot read '", path, "': it is a directory");
  if (std::filesystem::exists(status) && status.type() != file_type::regular && status.type() != file_type::fifo)
    check_state(false, "cannot read '", path, "': expected a file or a pipe, got ",
                status.type() == file_type::character ? "a character device"
                : status.type() == file_type::block   ? "a block device"
                : status.type() == file_type::socket  ? "a socket"
                                                      : "something else",
                " (save what it gives to a file first)");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  check_state(in.good(), "cannot open '", path, "': ", errno ? std::strerror(errno) : "unknown error");
  return read_tsv(in, path, digest);
}

void write_tsv(std::ostream& out, const std::vector<Pair>& pairs) {
  for (const Pair& p : pairs) out << p.source << '\t' << p.target << '\n';
}

}  // namespace seqgrad::data
