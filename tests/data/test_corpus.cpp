// tests/data/test_corpus.cpp - the TSV corpus reader: pairs, blank lines, CRLF, a byte-order
// mark, and errors that name FILE:LINE.
#include <sstream>

#include "data/corpus.h"
#include "io/utf8.h"
#include "tests/test_util.h"

using namespace seqgrad;

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
  std::istringstream in("a\tb\r\r\n\r\r\nc\r\td\n");  // found by tests/fuzz/fuzz_tsv.cpp
  const std::vector<data::Pair> pairs = data::read_tsv(in, "c.tsv");
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].target == "b");
  CHECK(pairs[1].source == "c\r");  // inside a line, a '\r' is text
  std::ostringstream out;
  data::write_tsv(out, pairs);
  std::istringstream again(out.str());
  const std::vector<data::Pair> reread = data::read_tsv(again, "c.tsv");
  CHECK(reread[0].target == "b");
  CHECK(reread[1].source == "c\r");
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
}
