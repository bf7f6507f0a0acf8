// tests/data/test_gettext.cpp - GNU gettext catalogs as a parallel corpus: the .mo reader on
// files msgfmt wrote (both byte orders, revision 0.1) and on damaged ones, the normalisation of
// accelerators, format specifiers and line breaks, what is dropped and why, repeats across
// programs, the split by program, and this machine's own zh_CN catalogs when it has them. The
// fixtures and the script that makes them are in tests/fixtures/gettext/.
#include <sys/stat.h>  // POSIX: mkfifo

#include <filesystem>
#include <map>
#include <stdexcept>

#include "data/corpus.h"
#include "data/gettext.h"
#include "data/tokenizer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using data::CatalogEntry;
using data::Pair;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = "tests/fixtures/gettext/";

// The message of the runtime_error that reading `bytes` as a .mo file ends in; "" if it reads.
// Any other exception fails the test.
std::string read_error(const std::string& bytes, const std::string& name = "crafted.mo") {
  try {
    data::read_mo(bytes, name);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string file_error(const std::string& path) {
  try {
    data::read_mo_file(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// A little-endian 32-bit number into `bytes` at `offset`, and read back.
void put_u32(std::string& bytes, size_t offset, uint32_t value) {
  for (int k = 0; k < 4; ++k) bytes[offset + k] = static_cast<char>((value >> (8 * k)) & 0xff);
}
uint32_t get_u32(const std::string& bytes, size_t offset) {
  uint32_t value = 0;
  for (int k = 3; k >= 0; --k) value = (value << 8) | static_cast<unsigned char>(bytes[offset + k]);
  return value;
}

Pair normalized(const std::string& source, const std::string& target) {
  return data::normalize_message_pair(source, target);
}

// What a whitespace tokenizer makes of a side.
std::vector<std::string> tokens(const std::string& side) { return data::split_whitespace(side); }

bool has_token(const std::string& side, const std::string& token) {
  for (const std::string& t : tokens(side))
    if (t == token) return true;
  return false;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Reading .mo files

TEST_CASE("read_mo_file: the entries msgfmt wrote, sorted by msgid, with contexts, a plural and the header") {
  const std::vector<CatalogEntry> entries = data::read_mo_file(kFixtures + "demo.mo");
  REQUIRE(entries.size() == 18);
  CHECK(entries[0].source == "");  // the header
  CHECK(entries[0].targets.size() == 1);
  CHECK(entries[0].targets[0].find("Content-Type: text/plain; charset=UTF-8\n") != std::string::npos);

  std::map<std::string, CatalogEntry> by_key;  // context|source
  for (const CatalogEntry& e : entries) by_key[e.context + "|" + e.source] = e;
  CHECK(by_key.at("|_File").targets == std::vector<std::string>{"文件(_F)"});
  CHECK(by_key.at("menu|_File").targets == std::vector<std::string>{"文件(_F)"});
  CHECK(by_key.at("Stock label|_Edit").targets == std::vector<std::string>{"编辑(_E)"});
  const CatalogEntry& plural = by_key.at("|One file");
  CHECK(plural.plural_source == "%d files");
  CHECK(plural.targets == std::vector<std::string>{"%d 个文件"});
  CHECK(by_key.at("|Usage: %s [OPTION]...\n  -h, --help\tshow this help\n").targets[0] ==
        "用法：%s [选项]...\n  -h, --help\t显示此帮助\n");
  CHECK(by_key.at("|Beep\a").targets[0] == "哔\a");
}

TEST_CASE("read_mo_file: a big-endian catalog reads the same as the little-endian one") {
  const std::string little = testing::read_file(kFixtures + "demo.mo");
  const std::string big = testing::read_file(kFixtures + "demo-be.mo");
  REQUIRE(little.size() == big.size());
  CHECK(little.compare(0, 4, "\xde\x12\x04\x95") == 0);  // 0x950412de, least significant byte first
  CHECK(big.compare(0, 4, "\x95\x04\x12\xde") == 0);
  const std::vector<CatalogEntry> a = data::read_mo_file(kFixtures + "demo.mo");
  const std::vector<CatalogEntry> b = data::read_mo_file(kFixtures + "demo-be.mo");
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].context == b[i].context);
    CHECK(a[i].source == b[i].source);
    CHECK(a[i].plural_source == b[i].plural_source);
    CHECK(a[i].targets == b[i].targets);
  }
}

TEST_CASE("read_mo_file: format revision 0.1 reads its static strings (system-dependent ones are not read)") {
  const std::string bytes = testing::read_file(kFixtures + "sysdep.mo");
  REQUIRE(bytes.size() > 8);
  CHECK(get_u32(bytes, 4) == 1);  // revision 0.1
  const std::vector<CatalogEntry> entries = data::read_mo_file(kFixtures + "sysdep.mo");
  REQUIRE(entries.size() == 2);  // the header and "Copy"; "%<PRIu64> bytes copied" is stored apart
  CHECK(entries[1].source == "Copy");
  CHECK(entries[1].targets[0] == "复制");
}

TEST_CASE("read_mo: damaged and crafted files each end in one runtime_error naming the file") {
  const std::string good = testing::read_file(kFixtures + "demo.mo");
  REQUIRE(good.size() == 1304);
  REQUIRE(read_error(good) == "");
  const uint32_t n = get_u32(good, 8), originals = get_u32(good, 12), translations = get_u32(good, 16);
  REQUIRE(n == 18);
  const auto edited = [&](size_t offset, uint32_t value) {
    std::string bytes = good;
    put_u32(bytes, offset, value);
    return bytes;
  };

  SUBCASE("cut short at several points") {
    CHECK(read_error("") == "crafted.mo: expected a .mo file of at least 28 bytes (its header), found 0 bytes");
    CHECK(read_error(good.substr(0, 3)) ==
          "crafted.mo: expected a .mo file of at least 28 bytes (its header), found 3 bytes");
    CHECK(read_error(good.substr(0, 27)).find("found 27 bytes") != std::string::npos);
    CHECK(read_error(good.substr(0, 60)) ==
          "crafted.mo: expected room for the 18 strings it counts (at least 28 + 18 x 18 = 352 bytes), found a "
          "file of 60 bytes");
    CHECK(read_error(good.substr(0, 400)).find("crafted.mo: string ") == 0);
    CHECK(read_error(good.substr(0, 400)).find("runs past the end of the file") != std::string::npos);
    const std::string last = read_error(good.substr(0, good.size() - 1));  // the last NUL gone
    CHECK(last.find("crafted.mo: string 17 of the translations runs past the end of the file (offset ") == 0);
    CHECK(last.find(" + 1 NUL byte > 1303 bytes)") != std::string::npos);
  }
  SUBCASE("every shorter prefix of the file") {
    for (size_t size = 0; size < good.size(); ++size) {
      const std::string message = read_error(good.substr(0, size));
      CHECK_MESSAGE(message.find("crafted.mo: ") == 0, "cut to ", size, " bytes: '", message, "'");
    }
  }
  SUBCASE("a bad magic number") {
    CHECK(read_error(edited(0, 0x12345678)) ==
          "crafted.mo: expected the magic number 0x950412de of a .mo file (in either byte order), found 0x12345678");
    CHECK(read_error("PK\x03\x04 this is a zip file, not a catalog").find("found 0x04034b50") != std::string::npos);
  }
  SUBCASE("a revision this reader does not know") {
    CHECK(read_error(edited(4, 7)) == "crafted.mo: expected format revision 0.0 or 0.1, found revision 0.7");
    CHECK(read_error(edited(4, 0x10000)) == "crafted.mo: expected format revision 0.0 or 0.1, found revision 1.0");
  }
  SUBCASE("a number of strings the file has no room for") {
    CHECK(read_error(edited(8, 100)) ==
          "crafted.mo: expected room for the 100 strings it counts (at least 28 + 100 x 18 = 1828 bytes), found a "
          "file of 1304 bytes");
    CHECK(read_error(edited(8, 0xffffffff)).find("room for the 4294967295 strings it counts") != std::string::npos);
    // N * 8 = 2^32 wraps to 0 in 32 bits; counted in 64 bits it is refused.
    CHECK(read_error(edited(8, 0x20000000)).find("room for the 536870912 strings it counts") != std::string::npos);
  }
  SUBCASE("a table that starts past the end, or whose end wraps around 2^32") {
    CHECK(read_error(edited(12, 1304)) ==
          "crafted.mo: the table of the originals runs past the end of the file (offset 1304 + 18 strings x 8 bytes = "
          "1448 > 1304 bytes)");
    CHECK(read_error(edited(12, 0xfffffff8)).find("the table of the originals runs past the end") != std::string::npos);
    CHECK(read_error(edited(16, 0xffffff00)).find("the table of the translations runs past the end") !=
          std::string::npos);
  }
  SUBCASE("a string whose offset or length runs past the end") {
    CHECK(read_error(edited(originals + 8 * 1 + 4, 5000)).find(
              "crafted.mo: string 1 of the originals runs past the end of the file (offset 5000 + length ") == 0);
    CHECK(read_error(edited(translations + 8 * 2, 0xffffffff)).find(
              "crafted.mo: string 2 of the translations runs past the end of the file (offset ") == 0);
    CHECK(read_error(edited(translations + 8 * 2, 0xffffffff)).find("length 4294967295 + 1 NUL byte > 1304 bytes") !=
          std::string::npos);
  }
  SUBCASE("a string that does not end in its NUL byte") {
    const uint32_t length = get_u32(good, originals + 8), offset = get_u32(good, originals + 12);
    std::string bytes = good;
    bytes[offset + length] = 'x';
    CHECK(read_error(bytes) == "crafted.mo: string 1 of the originals does not end in a NUL byte (expected 0x00 at "
                               "offset " + std::to_string(offset + length) + ", found 0x78)");
  }
  SUBCASE("entries that share one long string: more bytes of strings than the file holds") {
    std::string bytes = good;
    for (uint32_t i = 0; i < 2 * n; ++i) {  // every string: the whole file, which ends in a NUL
      put_u32(bytes, (i < n ? originals : translations) + 8 * (i % n), static_cast<uint32_t>(good.size() - 1));
      put_u32(bytes, (i < n ? originals : translations) + 8 * (i % n) + 4, 0);
    }
    CHECK(read_error(bytes).find("crafted.mo: expected strings that fit in the file, found 2608 bytes of strings by "
                                 "string 1 of the originals") == 0);
  }
  SUBCASE("any one byte changed: the entries, or one runtime_error") {
    for (size_t at = 0; at < good.size(); ++at) {
      std::string bytes = good;
      bytes[at] = static_cast<char>(bytes[at] ^ 0xff);
      const std::string message = read_error(bytes);
      CHECK_MESSAGE((message.empty() || message.find("crafted.mo: ") == 0), "byte ", at, ": '", message, "'");
    }
  }
}

TEST_CASE("read_mo_file: a folder, a FIFO, a device, a missing file and one over the size limit are refused unread") {
  testing::TempDir dir;
  CHECK(file_error(dir.path.string()) == dir.path.string() + ": expected a regular file, found a directory");
  const std::string fifo = dir.file("apt.mo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(file_error(fifo) == fifo + ": expected a regular file, found a FIFO");  // and no wait for a writer
  if (fs::exists("/dev/null")) {
    CHECK(file_error("/dev/null") == "/dev/null: expected a regular file, found a character device");
  }
  CHECK(file_error(dir.file("missing.mo")) == dir.file("missing.mo") + ": cannot read: no such file");
  const std::string big = dir.file("big.mo");
  testing::write_file(big, "");
  fs::resize_file(big, data::kMaxCatalogBytes + 1);  // sparse: nothing is written
  CHECK(file_error(big) == big + ": expected a catalog of at most 16 MiB, found 16777217 bytes");
  testing::write_file(dir.file("short.mo"), "\xde\x12\x04\x95");
  CHECK(file_error(dir.file("short.mo")) ==
        dir.file("short.mo") + ": expected a .mo file of at least 28 bytes (its header), found 4 bytes");
}

// ------------------------------------------------------------------------------------------------
// Normalising

TEST_CASE("normalize_message_pair: accelerators in the GTK, Qt and CJK styles go, identifiers stay") {
  CHECK(normalized("_File", "文件(_F)").source == "File");
  CHECK(normalized("_File", "文件(_F)").target == "文件");
  CHECK(normalized("&Open", "打开(&O)").source == "Open");
  CHECK(normalized("&Open", "打开(&O)").target == "打开");
  CHECK(normalized("C_ollate", "逐份（_O）").target == "逐份");  // full-width parentheses
  CHECK(normalized("C_ollate", "逐份（_O）").source == "Collate");
  CHECK(normalized("A_t:", "于(_T)：").target == "于：");
  CHECK(normalized("_File", "_Datei").source == "File");  // both sides in the GTK style
  CHECK(normalized("_File", "_Datei").target == "Datei");
  CHECK(normalized("&Save", "&Enregistrer").target == "Enregistrer");
  // "&&" is an escaped '&' where the pair has '&' accelerators, and text elsewhere.
  CHECK(normalized("Save && &Quit", "保存并退出(&Q)").source == "Save & Quit");
  CHECK(normalized("Use 'cmd1 && cmd2'", "请用 'cmd1 && cmd2'").source == "Use 'cmd1 && cmd2'");
  // Identifiers the translation copies stay, in either side.
  CHECK(normalized("Set LC_ALL='C' first", "请先设置LC_ALL='C'").source == "Set LC_ALL='C' first");
  CHECK(normalized("Set LC_ALL='C' first", "请先设置LC_ALL='C'").target == "请先设置LC_ALL='C'");
  CHECK(normalized("display in AT&T syntax", "用 AT&T 语法显示").target == "用 AT&T 语法显示");
  CHECK(normalized("The \"&lt; &gt;\" key", "“&lt; &gt;”键").source == "The \"&lt; &gt;\" key");
  CHECK(normalized("_Open file_name", "打开(_O) file_name").source == "Open file_name");
  // A '_' with no accelerator on the other side is not one.
  CHECK(normalized("sequence_options", "序列选项").source == "sequence_options");
  CHECK(normalized("password_encryption too long", "密码_加密值太长").source == "password_encryption too long");
  // Never a marker: an entity, a '_' between capitals or digits, a '_' in a word with another.
  CHECK(normalized("Ctrl+Alt+&lt;key&gt;", "Ctrl+Alt+&lt;键&gt;").source == "Ctrl+Alt+&lt;key&gt;");
  CHECK(normalized("Ctrl+Alt+&lt;key&gt;", "Ctrl+Alt+&lt;键&gt;").target == "Ctrl+Alt+&lt;键&gt;");
  CHECK(normalized("KP_Up", "KP_Left").source == "KP_Up");
  CHECK(normalized("KP_Up", "KP_Left").target == "KP_Left");
  CHECK(normalized("DW_MACRO_GNU_define", "DW_MACINFO_define").target == "DW_MACINFO_define");
  // A side with two markers holds names, not a label: none of them goes.
  CHECK(normalized("Setting ignore_failure or keep_going", "设置 忽略_失败 (&I)").source ==
        "Setting ignore_failure or keep_going");
  // Never inside a format specifier.
  CHECK(normalized("_Open %(file_name)s", "打开(_O) %(file_name)s").source == "Open %(file_name)s");
}

TEST_CASE("normalize_message_pair: each format specifier is kept whole, as a token of its own") {
  CHECK(normalized("Deleted %d files", "已删除 %d 个文件").source == "Deleted %d files");
  CHECK(normalized("Deleted %d files", "已删除%d个文件").target == "已删除 %d 个文件");
  CHECK(normalized("%s:%d: bad line", "%s:%d：错误的行").source == "%s : %d : bad line");
  CHECK(normalized("%s:%d: bad line", "%s:%d：错误的行").target == "%s : %d ：错误的行");
  CHECK(normalized("Progress: 50%% done", "进度：50%%").source == "Progress: 50 %% done");
  CHECK(normalized("“%s” is not valid", "“%s”无效").target == "“ %s ”无效");
  CHECK(normalized("x", "%2$s的%1$s").target == "%2$s 的 %1$s");
  CHECK(normalized("x", "值：%-10s|%lu|%5.2f|%.*s|%llx|%zu").target ==
        "值： %-10s | %lu | %5.2f | %.*s | %llx | %zu");
  CHECK(normalized("x", "共%(count)d条，%(name)s").target == "共 %(count)d 条， %(name)s");
  CHECK(normalized("x", "第{0}项，共{name}项，{}，{0:>8}，${HOME}").target ==
        "第 {0} 项，共 {name} 项， {} ， {0:>8} ， ${HOME}");
  // Not specifiers: a lone '%', a '%' and a space, an escaped brace.
  CHECK(normalized("100% sure, 5 % less", "x").source == "100% sure, 5 % less");
  CHECK(normalized("{{literal}} braces", "x").source == "{{literal}} braces");
  // Whatever the text around it, a whitespace tokenizer keeps every specifier whole.
  for (const std::string spec : {"%s", "%d", "%1$s", "%-10s", "%lu", "%%", "%(name)s", "{0}", "{name}"}) {
    const Pair p = normalized("a" + spec + "b", "甲" + spec + "乙");
    CHECK_MESSAGE(has_token(p.source, spec), spec, " in '", p.source, "'");
    CHECK_MESSAGE(has_token(p.target, spec), spec, " in '", p.target, "'");
  }
}

TEST_CASE("normalize_message_pair: line breaks and tabs become spaces, runs of spaces one, ends trimmed") {
  const Pair p =
      normalized("Usage: %s [OPTION]...\n  -h, --help\tshow this help\n", "用法：%s [选项]...\r\n\t显示此帮助\n");
  CHECK(p.source == "Usage: %s [OPTION]... -h, --help show this help");
  CHECK(p.target == "用法： %s [选项]... 显示此帮助");
  CHECK(normalized("   a \v\f b   ", "x").source == "a b");
}

// ------------------------------------------------------------------------------------------------
// Entries to pairs

TEST_CASE("catalog_pairs: the demo catalog's pairs, and what was left out and why") {
  const std::vector<CatalogEntry> entries = data::read_mo_file(kFixtures + "demo.mo");
  const data::CatalogPairs c = data::catalog_pairs(entries);
  CHECK(c.charset == "UTF-8");
  CHECK_FALSE(c.skipped);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"%s : %d : bad line", "%s : %d ：错误的行"},
      {"Open", "打开"},
      {"Collate", "逐份"},
      {"Deleted %d files", "已删除 %d 个文件"},
      {"Progress: 50 %% done", "进度：50 %% 完成"},
      {"Save & Quit", "保存并退出"},
      {"Set LC_ALL='C' to work around the problem.", "请设置 LC_ALL='C' 以临时解决问题。"},
      {"Edit", "编辑"},  // msgctxt "Stock label"
      {"Usage: %s [OPTION]... -h, --help show this help", "用法： %s [选项]... -h, --help 显示此帮助"},
      {"Wrote %(count)d records", "已写入 %(count)d 条记录"},
      {"File", "文件"},
      {"{0} of {name}", "第 {0} 项，共 {name} 项"},
  };
  REQUIRE(c.pairs.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(c.pairs[i].source == expected[i].first);
    CHECK(c.pairs[i].target == expected[i].second);
  }
  CHECK(c.dropped.header == 1);
  CHECK(c.dropped.plural == 1);      // "One file" / "%d files"
  CHECK(c.dropped.identical == 1);   // "GNOME"
  CHECK(c.dropped.empty == 1);       // "_1" -> "(_1)": nothing left of the translation
  CHECK(c.dropped.control == 1);     // "Beep\a"
  CHECK(c.dropped.duplicates == 1);  // msgctxt "menu", "_File" again
  CHECK(c.dropped.not_utf8 + c.dropped.untranslated + c.dropped.wrong_charset + c.dropped.too_long == 0);
  CHECK(static_cast<int64_t>(entries.size()) == static_cast<int64_t>(c.pairs.size()) + c.dropped.total());
  for (const Pair& p : c.pairs) {
    CHECK(data::text_line_problem(p.source + "\t" + p.target) == "");
    CHECK(p.source.find('\t') == std::string::npos);
    CHECK(p.target.find('\t') == std::string::npos);
  }
}

TEST_CASE("catalog_pairs: a catalog in another charset is skipped whole, and counted") {
  const std::vector<CatalogEntry> entries = data::read_mo_file(kFixtures + "latin1.mo");
  REQUIRE(entries.size() == 3);
  const data::CatalogPairs c = data::catalog_pairs(entries);
  CHECK(c.charset == "ISO-8859-1");
  CHECK(c.skipped);
  CHECK(c.pairs.empty());
  CHECK(c.dropped.wrong_charset == 3);
  CHECK(c.dropped.total() == 3);
}

TEST_CASE("catalog_pairs: entries made by hand: untranslated, broken UTF-8, no header, charset names") {
  std::vector<CatalogEntry> entries = {
      {"", "Open", "", {"打开"}},
      {"", "Close", "", {""}},                   // untranslated
      {"", "Save", "", {"\xff\xfe"}},            // not UTF-8
      {"", "Bad \xc3\x28 source", "", {"坏"}},  // not UTF-8
      {"", "Quit", "", {"退出", "退出"}},        // two translations: a plural
      {"", "  \n\t ", "", {"空"}},               // no text
  };
  data::CatalogPairs c = data::catalog_pairs(entries);  // no header: read as UTF-8, entry by entry
  CHECK(c.charset == "");
  CHECK_FALSE(c.skipped);
  REQUIRE(c.pairs.size() == 1);
  CHECK(c.pairs[0].source == "Open");
  CHECK(c.dropped.untranslated == 1);
  CHECK(c.dropped.not_utf8 == 2);
  CHECK(c.dropped.plural == 1);
  CHECK(c.dropped.empty == 1);
  CHECK(c.dropped.header == 0);

  for (const std::string charset : {"utf-8", "UTF8", "ASCII"}) {
    entries.insert(entries.begin(), CatalogEntry{"", "", "", {"Content-Type: text/plain; charset=" + charset + "\n"}});
    c = data::catalog_pairs(entries);
    CHECK(c.charset == charset);
    CHECK_FALSE(c.skipped);
    CHECK(c.pairs.size() == 1);
    entries.erase(entries.begin());
  }
  entries.insert(entries.begin(), CatalogEntry{"", "", "", {"Content-Type: text/plain; charset=GB2312\n"}});
  c = data::catalog_pairs(entries);
  CHECK(c.skipped);
  CHECK(c.dropped.wrong_charset == 7);
}

// ------------------------------------------------------------------------------------------------
// Programs

TEST_CASE("drop_repeated_sources: each source once, its first occurrence in the order given") {
  std::vector<data::ProgramPairs> programs = {
      {"apt", {{"Open", "打开"}, {"Quit", "退出"}}},
      {"bash", {{"Open", "开启"}, {"Exit", "退出"}, {"Exit", "离开"}}},
      {"coreutils", {{"Quit", "离开"}}},
  };
  CHECK(data::drop_repeated_sources(programs) == 3);
  REQUIRE(programs[0].pairs.size() == 2);
  CHECK(programs[0].pairs[0].target == "打开");  // apt's, the first
  REQUIRE(programs[1].pairs.size() == 1);
  CHECK(programs[1].pairs[0].source == "Exit");
  CHECK(programs[1].pairs[0].target == "退出");
  CHECK(programs[2].pairs.empty());
}

TEST_CASE("program_part: a fixed part for each program from FNV-1a of its name, about 90/5/5") {
  // FNV-1a 64 of the name modulo 20 (computed independently): apt 0, pgscripts-15 1, bash 3.
  CHECK(data::program_part("apt") == "test");
  CHECK(data::program_part("pgscripts-15") == "valid");
  CHECK(data::program_part("bash") == "train");
  std::map<std::string, int> parts;
  for (int i = 0; i < 1000; ++i) ++parts[data::program_part("program" + std::to_string(i))];
  CHECK(parts.size() == 3);
  CHECK(parts["test"] == 50);   // the counts themselves, pinned: the hash may never change
  CHECK(parts["valid"] == 41);
  CHECK(parts["train"] == 909);
}

TEST_CASE("catalog_files and read_locale_catalogs: a locale's catalogs in order, repeats dropped across programs") {
  testing::TempDir dir;
  const fs::path messages = dir.path / "zh_CN" / "LC_MESSAGES";
  const std::string no_folder =
      "catalog_files: expected a folder of catalogs at '" + messages.string() + "', found none";
  CHECK_THROWS_WITH_AS(data::catalog_files(dir.path.string(), "zh_CN"), no_folder.c_str(), std::runtime_error);
  fs::create_directories(messages);
  CHECK_THROWS_WITH_AS(data::catalog_files(dir.path.string(), "zh_CN"),
                       ("catalog_files: expected .mo files in '" + messages.string() + "', found none").c_str(),
                       std::runtime_error);
  CHECK_THROWS_AS(data::catalog_files(dir.path.string(), ""), std::invalid_argument);
  CHECK_THROWS_AS(data::catalog_files(dir.path.string(), "../etc"), std::invalid_argument);

  fs::copy_file(kFixtures + "demo.mo", messages / "zdemo.mo");
  fs::copy_file(kFixtures + "demo.mo", messages / "demo.mo");
  fs::copy_file(kFixtures + "latin1.mo", messages / "latin1.mo");
  testing::write_file((messages / "notes.txt").string(), "not a catalog");
  fs::create_directories(messages / "folder.mo");
  const std::vector<std::string> files = data::catalog_files(dir.path.string(), "zh_CN");
  CHECK(files == std::vector<std::string>{(messages / "demo.mo").string(), (messages / "latin1.mo").string(),
                                          (messages / "zdemo.mo").string()});

  const data::LocaleCatalogs locale = data::read_locale_catalogs(dir.path.string(), "zh_CN");
  REQUIRE(locale.programs.size() == 3);
  CHECK(locale.programs[0].program == "demo");
  CHECK(locale.programs[0].pairs.size() == 12);
  CHECK(locale.programs[1].program == "latin1");
  CHECK(locale.programs[1].pairs.empty());
  CHECK(locale.programs[2].pairs.empty());  // zdemo: every source already in demo
  CHECK(locale.entries == 18 + 3 + 18);
  CHECK(locale.skipped_catalogs == 1);
  CHECK(locale.dropped.wrong_charset == 3);
  CHECK(locale.dropped.duplicates == 1 + 1 + 12);
  CHECK(locale.entries == 12 + locale.dropped.total());

  fs::resize_file(messages / "zdemo.mo", 100);  // one damaged catalog: the error names it
  const std::string damaged = (messages / "zdemo.mo").string() + ": expected room for the 18 strings it counts";
  CHECK_THROWS_WITH_AS(data::read_locale_catalogs(dir.path.string(), "zh_CN"), doctest::Contains(damaged.c_str()),
                       std::runtime_error);
}

TEST_CASE("read_locale_catalogs: this machine's zh_CN catalogs make good corpus lines") {
  const std::string locale_dir = "/usr/share/locale";
  if (!fs::is_directory(locale_dir + "/zh_CN/LC_MESSAGES")) {
    MESSAGE("skipped: no " << locale_dir << "/zh_CN/LC_MESSAGES on this machine");
    return;
  }
  const data::LocaleCatalogs locale = data::read_locale_catalogs(locale_dir, "zh_CN");
  // What is wrong with a pair as a corpus line, or "" (checked one by one, reported together).
  const auto line_problem = [](const Pair& p) -> std::string {
    if (p.source.find('\t') != std::string::npos || p.target.find('\t') != std::string::npos) return "a tab";
    const std::string problem = data::text_line_problem(p.source + "\t" + p.target);
    if (!problem.empty()) return problem;
    if (p.source.empty() || p.target.empty()) return "an empty side";
    if (p.source == p.target) return "a target equal to its source";
    if (data::join(tokens(p.source), " ") != p.source || data::join(tokens(p.target), " ") != p.target)
      return "spaces not single, or not trimmed";
    return "";
  };
  int64_t pairs = 0, bad = 0;
  std::map<std::string, int64_t> programs_in, pairs_in;
  for (const data::ProgramPairs& program : locale.programs) {
    const std::string part = data::program_part(program.program);
    ++programs_in[part];
    pairs_in[part] += static_cast<int64_t>(program.pairs.size());
    for (const Pair& p : program.pairs) {
      ++pairs;
      const std::string problem = line_problem(p);
      if (!problem.empty() && ++bad <= 5) {
        CHECK_MESSAGE(problem == "", program.program, ": '", p.source, "': ", problem);
      }
    }
  }
  CHECK(bad == 0);
  CHECK(pairs > 1000);
  CHECK(locale.entries == pairs + locale.dropped.total());
  const data::CatalogDrops& d = locale.dropped;
  MESSAGE("zh_CN: " << locale.programs.size() << " catalogs, " << locale.entries << " entries, " << pairs
                    << " pairs kept; dropped: header " << d.header << ", plural " << d.plural << ", untranslated "
                    << d.untranslated << ", not UTF-8 " << d.not_utf8 << ", wrong charset " << d.wrong_charset << " ("
                    << locale.skipped_catalogs << " catalogs), empty " << d.empty << ", control " << d.control
                    << ", too long " << d.too_long << ", identical " << d.identical << ", duplicates " << d.duplicates);
  MESSAGE("zh_CN parts: train " << programs_in["train"] << " programs / " << pairs_in["train"] << " pairs, valid "
                                << programs_in["valid"] << " / " << pairs_in["valid"] << ", test "
                                << programs_in["test"] << " / " << pairs_in["test"]);
}
