// data/gettext.h - a system's message translations as a parallel corpus: GNU gettext catalogs
// (.mo files, such as /usr/share/locale/zh_CN/LC_MESSAGES/apt.mo) read into English -> target
// sentence pairs.
//
// Three steps, each usable alone:
//   read_mo_file   the entries of one .mo file, exactly as stored (context, msgid, plural, msgstr)
//   catalog_pairs  the entries that make good sentence pairs, normalised, with counts of the rest
//   read_locale_catalogs  every catalog of a language, one ProgramPairs per program, each source
//                  kept once; program_part then assigns whole programs to train, valid or test
//
// What the reader accepts: a regular file of at most kMaxCatalogBytes, in either byte order,
// format revision 0.0 or 0.1 (0.1 adds "system-dependent" strings, those with <inttypes.h>
// macros such as <PRIu64>; they are stored apart and not read here). Every count, length and
// offset is checked against the file's size before it is used, so a truncated or crafted file
// ends in one std::runtime_error naming the file and what was expected:
//   "apt.mo: string 12 of the originals runs past the end of the file (offset 4000 + length 90
//    + 1 NUL byte > 3900 bytes)"
//
// Normalising a pair (normalize_message_pair), both sides, in this order:
//   1. Line breaks and tabs become spaces:           "Usage:\n  -h\tthis help"  -> "Usage: -h this help"
//   2. Accelerators (the underlined letter of a menu item) go:
//        the CJK style, always:                      "文件(_F)", "打开(&O)", "编辑（_E）" -> "文件", "打开", "编辑"
//        a '_' or '&' before an ASCII letter or digit: "_File" -> "File", "&Open" -> "Open",
//          "C_ollate" -> "Collate" -- but only where it is an accelerator, which the other side
//          decides: a translator translates a label and keeps its one accelerator (gettext's
//          msgfmt --check-accelerators holds a translation to exactly one), and copies a name
//          unchanged. So a marker goes when the word holding it (the run of ASCII letters,
//          digits and '_' around it) does not appear on the other side, it is its side's only
//          marker, and the other side has an accelerator too:
//            "_File" / "文件(_F)" -> "File" / "文件"      "_File" / "_Datei" -> "File" / "Datei"
//            "Set LC_ALL='C'" / "请设置 LC_ALL='C'"        stays: the translation has the word
//            "sequence_options" / "序列选项"               stays: the translation has no accelerator
//          Never a marker: "&&", an entity ("&lt;", "&#38;"), a '_' between two capitals or
//          digits (KP_Up, PGEVT_CONNRESET), a '_' in a word with another (DW_MACRO_GNU_define).
//          What remains wrong is a name a translator changed (".debug_line" / ".debug_info":
//          both lose their '_'): 4 of the 52,396 messages in a Debian 12 system's zh_CN catalogs.
//        "&&" is Qt's escaped '&': it becomes "&" where an '&' accelerator goes
//          ("Save && &Quit" / "保存并退出(&Q)" -> "Save & Quit"), and stays elsewhere ("cmd1 && cmd2").
//   3. Format specifiers stay byte for byte, and each becomes a token of its own: a space is put
//      between a specifier and any text it touches, so a whitespace tokenizer keeps it whole.
//        printf:  %s %d %5ld %-10s %1$s %.*f %lu %%     Python:  %(name)s %(count)5d
//        braces:  {} {0} {name} {0:>8} ${HOME}        (a doubled "{{" is text)
//      "Deleted %d files" -> "Deleted %d files", "%s:%d: bad line" -> "%s : %d : bad line",
//      "已删除“%s”" -> "已删除“ %s ”", "50%% done" -> "50 %% done", "写入{path}" -> "写入 {path}".
//      A '%' that starts no specifier ("100% sure") is text.
//   4. Runs of spaces become one; both ends are trimmed.
// A pair is kept when both sides still hold text, neither holds a control character (every side
// passes data::text_line_problem and has no tab) and the target differs from the source.
//
// What this is not: a .po reader (.po is text; msgfmt turns it into .mo), nor a plural-forms
// evaluator: messages with plurals are counted and left out. Next: data/corpus.h writes the pairs
// as a TSV corpus (write_tsv) that `seqgrad train --train` reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/tasks.h"

namespace seqgrad::data {

// The largest catalog read. The biggest of the 4,337 on a Debian 12 system is about 1 MiB; the
// cap also bounds what a crafted file of many empty entries costs: each takes 18 bytes of the
// file but about 150 of memory (932,066 of them in 16 MiB: about 170 MiB).
constexpr uint64_t kMaxCatalogBytes = uint64_t{16} << 20;  // 16 MiB

// One message of a catalog.
struct CatalogEntry {
  std::string context;                // msgctxt ("" if none): "Stock label"
  std::string source;                 // msgid: "_File" ("" for the catalog's header)
  std::string plural_source;          // msgid_plural ("" if none): "%d files"
  std::vector<std::string> targets;   // msgstr, or msgstr[0], msgstr[1], ... of a plural
};

// Every entry of the .mo file at `path`, in the file's order (sorted by msgid), the header
// (empty msgid) included. Refuses a file that is not a regular file ("expected a regular file,
// found a FIFO"), one over kMaxCatalogBytes, and any damaged one, naming `path`.
std::vector<CatalogEntry> read_mo_file(const std::string& path);
// The same from the bytes of a .mo file already in memory; `name` names it in messages.
std::vector<CatalogEntry> read_mo(const std::string& bytes, const std::string& name);

// How many entries were left out, and why (each entry is counted once, under the first reason
// that applies, in this order).
struct CatalogDrops {
  int64_t wrong_charset = 0;  // every entry of a catalog whose header names a charset other than UTF-8
  int64_t header = 0;         // the catalog's header (empty msgid, no context)
  int64_t plural = 0;         // a message with plural forms (a msgid_plural, or several translations)
  int64_t untranslated = 0;   // an empty translation
  int64_t not_utf8 = 0;       // a side that is not valid UTF-8
  int64_t empty = 0;          // a side with no text left once normalised ("_1" -> "(_1)")
  int64_t control = 0;        // a side that holds a control character once normalised ("\a", ESC)
  int64_t too_long = 0;       // a pair longer than a corpus line may be (kMaxLineBytes)
  int64_t identical = 0;      // a target equal to its source once normalised ("GNOME" -> "GNOME")
  int64_t duplicates = 0;     // a source kept already (same msgid in two contexts; "_File" and "File")

  int64_t total() const;
  CatalogDrops& operator+=(const CatalogDrops& other);
};

// The sentence pairs of one catalog. entries.size() == pairs.size() + dropped.total().
struct CatalogPairs {
  std::string charset;      // as the header declares it ("UTF-8"), "" if it declares none
  bool skipped = false;     // the charset is not UTF-8 (nor ASCII): no pairs were taken
  std::vector<Pair> pairs;  // in the catalog's order, each source once
  CatalogDrops dropped;
};

// The good pairs among `entries`, normalised (see the top of this file). A catalog without a
// charset is read as UTF-8 and its entries checked one by one.
CatalogPairs catalog_pairs(const std::vector<CatalogEntry>& entries);

// Steps 1 to 4 above on one message and its translation; a side may come back empty.
Pair normalize_message_pair(const std::string& source, const std::string& target);

// One program's pairs; the program is its catalog's file name without ".mo" ("apt", "bash").
struct ProgramPairs {
  std::string program;
  std::vector<Pair> pairs;
};

// Removes every pair whose source an earlier pair already had, in the order given (programs in
// order, pairs in order): the first occurrence stays. Returns how many were removed.
int64_t drop_repeated_sources(std::vector<ProgramPairs>& programs);

// Which part a program's pairs belong to, from a stable hash of its name (FNV-1a, 64 bits):
// h % 20 == 0 -> "test", h % 20 == 1 -> "valid", else "train" (about 90/5/5 by program). A
// program is wholly in one part, so no message of a test program is seen in training (and after
// drop_repeated_sources no source is in two programs).
std::string program_part(const std::string& program);

// The sorted paths of <locale_dir>/<lang>/LC_MESSAGES/*.mo; an error naming the folder when it
// does not exist or holds no .mo file.
std::vector<std::string> catalog_files(const std::string& locale_dir, const std::string& lang);

// A language's whole corpus: every catalog of catalog_files, read in that (sorted) order, its
// pairs taken by catalog_pairs, then drop_repeated_sources across programs.
struct LocaleCatalogs {
  std::vector<ProgramPairs> programs;  // one per catalog read, skipped ones included (no pairs)
  CatalogDrops dropped;                // summed; duplicates include those across programs
  int64_t entries = 0;                 // entries read, headers included
  int64_t skipped_catalogs = 0;        // catalogs whose charset is not UTF-8
};
LocaleCatalogs read_locale_catalogs(const std::string& locale_dir, const std::string& lang);

}  // namespace seqgrad::data
