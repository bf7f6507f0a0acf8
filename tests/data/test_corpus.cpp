// tests/data/test_corpus.cpp - the TSV corpus reader: pairs, blank lines, CRLF, a byte-order
// mark, and errors that name FILE:LINE.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "data/corpus.h"
#include "io/utf8.h"
#include "tests/test_util.h"

using namespace seqgrad;
namespace fs = std::filesystem;

TEST_CASE("read_tsv: pairs, blank lines skipped, Windows line ends, UTF-8 kept") {
  std::istringstream in("billy eats a banana\t比利 吃 香蕉\r\n\n  \nhe reads\til lit\n");
  const std::vector<data::Pair> pairs = data::read_tsv(in, "c.tsv");
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].target == "比利 吃 香蕉");
  CHECK(pairs[1].source == "he reads");
  std::ostringstream out;
  data::write_tsv(out, pairs);
  CHECK(out.str() == "billy eats a banana\t比利 吃 香蕉\nhe reads\til lit\n");
}

TEST_CASE("read_tsv: stray carriage returns at a line end go too, so written pairs read back the same") {
  std::istringstream in("a\tb\r\r\n\r\r\nc\td\r\n");  // found by tests/fuzz/fuzz_tsv.cpp
  const std::vector<data::Pair> pairs = data::read_tsv(in, "c.tsv");
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].target == "b");
  CHECK(pairs[1].target == "d");
  std::ostringstream out;
  data::write_tsv(out, pairs);
  std::istringstream again(out.str());
  const std::vector<data::Pair> reread = data::read_tsv(again, "c.tsv");
  CHECK(reread[0].target == "b");
  CHECK(reread[1].target == "d");
  // Inside a line a '\r' is a control character, refused (see "read_tsv errors name the file and line").
}

TEST_CASE("read_tsv: a byte-order mark at the start of a line is not part of its first word") {
  // Some editors save UTF-8 with EF BB BF in front; it used to become a "\ufeffi" token. Files
  // joined with cat keep one per file, so every line start is cleared; inside a line it is text.
  std::istringstream marked("\xEF\xBB\xBFi read\tje lis\n\xEF\xBB\xBFx\t\xEF\xBB\xBFy\n");
  const std::vector<data::Pair> pairs = data::read_tsv(marked, "c.tsv");
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].source == "i read");
  CHECK(pairs[1].source == "x");
  CHECK(pairs[1].target == "\xEF\xBB\xBFy");
  // Two marks (a file saved twice with one): both go, so the pair reads back the same after
  // write_tsv (with one left, the source began with a mark that the next read took off).
  std::istringstream twice("\xEF\xBB\xBF\xEF\xBB\xBFmT@\tls line\n");
  const std::vector<data::Pair> read = data::read_tsv(twice, "c.tsv");
  REQUIRE(read.size() == 1);
  CHECK(read[0].source == "mT@");
  std::ostringstream out;
  data::write_tsv(out, read);
  std::istringstream again(out.str());
  CHECK(data::read_tsv(again, "c.tsv")[0].source == read[0].source);
  std::string line = "\xEF\xBB\xBF", plain = "abc";
  CHECK(io::strip_byte_order_mark(line));
  CHECK(line.empty());
  CHECK(!io::strip_byte_order_mark(plain));
  CHECK(plain == "abc");
}

TEST_CASE("read_tsv errors name the file and line") {
  std::istringstream no_tab("a\tb\nno tab here\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(no_tab, "c.tsv"), "c.tsv:2: expected 'source<TAB>target', found no tab",
                       std::runtime_error);
  std::istringstream two_tabs("a\tb\tc\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(two_tabs, "c.tsv"), "c.tsv:1: expected 'source<TAB>target', found more than one tab",
                       std::runtime_error);
  std::istringstream empty("\n\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(empty, "e.tsv"), "e.tsv: no sentence pairs (expected lines of 'source<TAB>target')",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(data::read_tsv_file("/nonexistent/x.tsv"), "cannot open '/nonexistent/x.tsv': No such file or directory",
                       std::runtime_error);
  // Checked where the line is known, not when the vocabulary is saved as JSON an epoch later.
  std::istringstream bad_utf8("a\tb\nc \xC3\x28 d\te\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(bad_utf8, "c.tsv"), "c.tsv:2: expected UTF-8 text, found byte 0xc3 at column 3",
                       std::runtime_error);
  std::istringstream empty_source("a\tb\n  \tb\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(empty_source, "c.tsv"), "c.tsv:2: expected 'source<TAB>target', found an empty source",
                       std::runtime_error);
  std::istringstream empty_target("a\t\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(empty_target, "c.tsv"), "c.tsv:1: expected 'source<TAB>target', found an empty target",
                       std::runtime_error);
  // Only word-start markers (▁, U+2581), which byte-pair encoding reads as spaces: empty too.
  std::istringstream markers("a\tb\na b\t\xE2\x96\x81 \xE2\x96\x81\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(markers, "c.tsv"), "c.tsv:2: expected 'source<TAB>target', found an empty target",
                       std::runtime_error);
  std::istringstream marked_word("\xE2\x96\x81" "a\tb\n");  // a marker with a word is text
  CHECK(data::read_tsv(marked_word, "c.tsv").size() == 1);
  // A read error is not the end of the file: "no sentence pairs" would hide it.
  std::istringstream unreadable("a\tb\n");
  unreadable.setstate(std::ios::badbit);
  CHECK_THROWS_WITH_AS(data::read_tsv(unreadable, "c.tsv"), doctest::Contains("c.tsv:1: cannot read: "), std::runtime_error);
  CHECK_THROWS_WITH_AS(data::read_tsv_file("/"), "cannot read '/': it is a directory", std::runtime_error);
  // A control character would be a token no vocabulary may hold: refused where its line is known.
  std::istringstream control("a\tb\nc\x0b" "d\te\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(control, "c.tsv"), "c.tsv:2: expected text, found control character 0x0b at column 2",
                       std::runtime_error);
  std::istringstream mid_return("a\rb\tc\r\n");  // only a line's last '\r's are its line end
  CHECK_THROWS_WITH_AS(data::read_tsv(mid_return, "c.tsv"), "c.tsv:1: expected text, found control character 0x0d at column 2",
                       std::runtime_error);
}

TEST_CASE("read_tsv reads once, front to back: NUL bytes and endless lines end at once, a device is refused unread") {
  // `cat /dev/zero | seqgrad train --train /dev/stdin` spun forever growing one line.
  std::istringstream zeros(std::string("a\tb\n") + std::string(1000, '\0'));
  CHECK_THROWS_WITH_AS(data::read_tsv(zeros, "z.tsv"), "z.tsv:2: expected text, found a NUL byte at column 1",
                       std::runtime_error);
  std::istringstream long_line(std::string("a\tb\nx\t") + std::string(data::kMaxLineBytes, 'y') + "\n");
  CHECK_THROWS_WITH_AS(data::read_tsv(long_line, "l.tsv"),
                       "l.tsv:2: expected a line of at most 16 MiB (one sentence pair), found a longer one", std::runtime_error);
  std::istringstream just_fits(std::string("x\t") + std::string(data::kMaxLineBytes - 2, 'y'));  // no '\n' at the end
  CHECK(data::read_tsv(just_fits, "l.tsv")[0].target.size() == data::kMaxLineBytes - 2);
  if (fs::exists("/dev/zero"))
    CHECK_THROWS_WITH_AS(data::read_tsv_file("/dev/zero"),
                         "cannot read '/dev/zero': expected a file or a pipe, got a character device (save what it gives "
                         "to a file first)",
                         std::runtime_error);
}

TEST_CASE("read_tsv's digest is the size and FNV-1a hash of every byte read, the line ends and the last line included") {
  const std::string text = "a b\tc d\r\n\xEF\xBB\xBF" "e\tf";  // a Windows line end, a byte-order mark, no final '\n'
  std::istringstream in(text);
  data::Digest digest;
  CHECK(data::read_tsv(in, "c.tsv", &digest).size() == 2);
  uint64_t hash = 14695981039346656037ull;  // FNV-1a, byte by byte, as its definition reads
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  CHECK(digest.bytes == text.size());
  CHECK(digest.fnv1a == hash);
  char expected[64];
  std::snprintf(expected, sizeof expected, "%zu %016llx", text.size(), static_cast<unsigned long long>(hash));
  CHECK(digest.text() == expected);
  // The empty input's digest is the offset basis itself, in 16 hex digits.
  CHECK(data::Digest().text() == "0 cbf29ce484222325");
}
