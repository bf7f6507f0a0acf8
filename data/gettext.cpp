// data/gettext.cpp - the .mo reader, and catalog entries turned into normalised sentence pairs;
// see gettext.h for the rules, with examples.
#include "data/gettext.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <unordered_set>

#include "data/corpus.h"
#include "io/utf8.h"
#include "tensor/check.h"

namespace seqgrad::data {

namespace fs = std::filesystem;

// ------------------------------------------------------------------------------------------------
// Reading a .mo file
//
// The layout (the GNU gettext manual, "The Format of GNU MO Files"). Every number is a 32-bit
// unsigned integer in the byte order of the machine that wrote the file; the magic number says
// which:
//
//   offset  0   magic number 0x950412de (read as 0xde120495 in the other byte order)
//           4   format revision: major << 16 | minor (0.0, or 0.1 with system-dependent strings)
//           8   N  number of strings
//          12   O  offset of the table of original strings
//          16   T  offset of the table of translations
//          20   S  size of the hash table        (a lookup aid, not read here)
//          24   H  offset of the hash table      (a lookup aid, not read here)
//          28   (revision 0.1: the tables of system-dependent strings follow; not read here)
//
//   O + 8 i     length and offset of original i      (i = 0 .. N-1, sorted by their bytes)
//   T + 8 i     length and offset of translation i
//
// Each string is `length` bytes followed by a NUL byte that the length does not count. An
// original is "msgctxt \x04 msgid \0 msgid_plural" (the context and the plural are optional); a
// translation is its plural forms joined by '\0'. Entry 0 is usually the header: an empty msgid
// whose translation holds "Name: value" lines, among them
// "Content-Type: text/plain; charset=UTF-8".

namespace {

constexpr uint32_t kMagic = 0x950412de;
constexpr uint32_t kMagicSwapped = 0xde120495;
constexpr uint64_t kHeaderBytes = 28;

std::string hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

std::string hex8(unsigned char value) {
  char text[5];
  std::snprintf(text, sizeof text, "0x%02x", value);
  return text;
}

// The 32-bit number at `offset` (which the caller has checked lies in the file).
uint32_t read_u32(const std::string& bytes, uint64_t offset, bool big_endian) {
  uint32_t value = 0;
  for (int k = 0; k < 4; ++k) {
    const uint32_t byte = static_cast<unsigned char>(bytes[offset + (big_endian ? k : 3 - k)]);
    value = (value << 8) | byte;
  }
  return value;
}

// Where one string lies in the file: `length` bytes from `offset`, then a NUL.
struct StringSpan {
  uint32_t offset = 0, length = 0;
};

// The N strings of one table ("originals" or "translations"), each checked to lie in the file
// and end in its NUL; nothing is copied yet. `total` counts the bytes of strings so far, NULs
// included: strings never share bytes in a file msgfmt writes, so more than the file holds
// means a crafted file, which would otherwise make many copies of one long string.
std::vector<StringSpan> read_table(const std::string& bytes, bool big_endian, uint32_t table, uint32_t n,
                                   const char* which, const std::string& name, uint64_t& total) {
  const uint64_t size = bytes.size();
  const uint64_t end = uint64_t{table} + uint64_t{n} * 8;  // 64-bit: no overflow for any N and offset
  check_state(end <= size, name, ": the table of the ", which, " runs past the end of the file (offset ", table, " + ",
              n, " strings x 8 bytes = ", end, " > ", size, " bytes)");
  std::vector<StringSpan> spans(n);  // 8 bytes each, as in the table: no bigger than the file
  for (uint32_t i = 0; i < n; ++i) {
    StringSpan& s = spans[i];
    s.length = read_u32(bytes, uint64_t{table} + 8 * uint64_t{i}, big_endian);
    s.offset = read_u32(bytes, uint64_t{table} + 8 * uint64_t{i} + 4, big_endian);
    const uint64_t nul = uint64_t{s.offset} + s.length;  // where its NUL must be
    check_state(nul + 1 <= size, name, ": string ", i, " of the ", which, " runs past the end of the file (offset ",
                s.offset, " + length ", s.length, " + 1 NUL byte > ", size, " bytes)");
    check_state(bytes[nul] == '\0', name, ": string ", i, " of the ", which,
                " does not end in a NUL byte (expected 0x00 at offset ", nul, ", found ",
                hex8(static_cast<unsigned char>(bytes[nul])), ")");
    total += uint64_t{s.length} + 1;
    check_state(total <= size, name, ": expected strings that fit in the file, found ", total,
                " bytes of strings by string ", i, " of the ", which, " in a file of ", size,
                " bytes (entries sharing their bytes)");
  }
  return spans;
}

// Splits at every `separator`: "a\0b" -> {"a", "b"}, "" -> {""}.
std::vector<std::string> split_at(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

}  // namespace

std::vector<CatalogEntry> read_mo(const std::string& bytes, const std::string& name) {
  const uint64_t size = bytes.size();
  check_state(size >= kHeaderBytes, name, ": expected a .mo file of at least ", kHeaderBytes,
              " bytes (its header), found ", size, " bytes");
  const uint32_t magic = read_u32(bytes, 0, /*big_endian=*/false);
  check_state(magic == kMagic || magic == kMagicSwapped, name, ": expected the magic number ", hex32(kMagic),
              " of a .mo file (in either byte order), found ", hex32(magic));
  const bool big_endian = magic == kMagicSwapped;
  const uint32_t revision = read_u32(bytes, 4, big_endian);
  const uint32_t major = revision >> 16, minor = revision & 0xffff;
  check_state(major == 0 && minor <= 1, name, ": expected format revision 0.0 or 0.1, found revision ", major, ".",
              minor);
  const uint32_t n = read_u32(bytes, 8, big_endian);
  // Each entry needs two table slots (8 bytes each) and two NUL bytes: a count the file has no
  // room for is refused before anything is sized from it.
  const uint64_t least = kHeaderBytes + 18 * uint64_t{n};
  check_state(least <= size, name, ": expected room for the ", n, " strings it counts (at least ", kHeaderBytes,
              " + ", n, " x 18 = ", least, " bytes), found a file of ", size, " bytes");
  uint64_t total = 0;
  const std::vector<StringSpan> originals =
      read_table(bytes, big_endian, read_u32(bytes, 12, big_endian), n, "originals", name, total);
  const std::vector<StringSpan> translations =
      read_table(bytes, big_endian, read_u32(bytes, 16, big_endian), n, "translations", name, total);

  // Everything is checked: now the strings are copied out, each once.
  std::vector<CatalogEntry> entries(n);
  for (uint32_t i = 0; i < n; ++i) {
    CatalogEntry& e = entries[i];
    e.source.assign(bytes, originals[i].offset, originals[i].length);
    const size_t nul = e.source.find('\0');  // msgid \0 msgid_plural
    if (nul != std::string::npos) {
      e.plural_source = e.source.substr(nul + 1);
      e.source.resize(nul);
    }
    const size_t eot = e.source.find('\x04');  // msgctxt \x04 msgid
    if (eot != std::string::npos) {
      e.context = e.source.substr(0, eot);
      e.source.erase(0, eot + 1);
    }
    e.targets = split_at(bytes.substr(translations[i].offset, translations[i].length), '\0');
  }
  return entries;
}

std::vector<CatalogEntry> read_mo_file(const std::string& path) {
  // Looked at before it is opened: opening a FIFO waits for a writer, a device may not end.
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  check_state(status.type() != fs::file_type::not_found, path, ": cannot read: no such file");
  check_state(!ec, path, ": cannot read: ", ec.message());
  using fs::file_type;
  const file_type type = status.type();
  check_state(type == file_type::regular, path, ": expected a regular file, found ",
              type == file_type::directory   ? "a directory"
              : type == file_type::fifo      ? "a FIFO"
              : type == file_type::character ? "a character device"
              : type == file_type::block     ? "a block device"
              : type == file_type::socket    ? "a socket"
                                             : "something else");
  const uintmax_t size = fs::file_size(path, ec);
  check_state(!ec, path, ": cannot read: ", ec.message());
  check_state(size <= kMaxCatalogBytes, path, ": expected a catalog of at most ", kMaxCatalogBytes >> 20,
              " MiB, found ", size, " bytes");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  check_state(in.good(), path, ": cannot open: ", errno ? std::strerror(errno) : "unknown error");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  check_state(!in.bad(), path, ": cannot read: ", errno ? std::strerror(errno) : "input/output error");
  bytes.resize(static_cast<size_t>(in.gcount()));  // a file that shrank meanwhile: what it holds now
  return read_mo(bytes, path);
}

// ------------------------------------------------------------------------------------------------
// Normalising a message and its translation (the rules, with examples, are in gettext.h)

namespace {

bool is_ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_identifier_char(char c) { return is_ascii_alnum(c) || c == '_'; }
bool one_of(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

// The length of the printf or Python %-specifier at text[i] (a '%'), or 0 if none starts there:
//   %%   %[N$][flags][width][.precision][length]conversion   %(name)[flags][width][.precision]conversion
size_t percent_specifier_length(const std::string& text, size_t i) {
  const size_t n = text.size();
  size_t j = i + 1;
  if (j < n && text[j] == '%') return 2;
  if (j < n && text[j] == '(') {  // Python: %(name)s
    size_t k = j + 1;
    while (k < n && is_identifier_char(text[k])) ++k;
    if (k == j + 1 || k >= n || text[k] != ')') return 0;
    j = k + 1;
  } else {  // a position: %1$s
    size_t k = j;
    while (k < n && is_digit(text[k])) ++k;
    if (k > j && k < n && text[k] == '$') j = k + 1;
  }
  while (j < n && one_of(text[j], "-+#0'")) ++j;  // flags, without the space flag: "100% done" is text
  if (j < n && text[j] == '*') {                   // width
    ++j;
  } else {
    while (j < n && is_digit(text[j])) ++j;
  }
  if (j < n && text[j] == '.') {  // precision
    ++j;
    if (j < n && text[j] == '*') {
      ++j;
    } else {
      while (j < n && is_digit(text[j])) ++j;
    }
  }
  if (j + 1 < n && (text.compare(j, 2, "hh") == 0 || text.compare(j, 2, "ll") == 0)) {
    j += 2;  // length
  } else if (j < n && one_of(text[j], "hlLqjzZt")) {
    ++j;
  }
  if (j < n && one_of(text[j], "diouxXeEfFgGaAcsCSpnmr")) return j + 1 - i;  // conversion
  return 0;
}

// The length of the brace specifier at text[i] ('{' or the '$' of "${"), or 0 if none starts
// there: {} {0} {name} {0.attr} {0:>8} ${HOME}.
size_t brace_specifier_length(const std::string& text, size_t i) {
  const size_t n = text.size();
  size_t j = i;
  if (text[j] == '$') ++j;
  if (j >= n || text[j] != '{') return 0;
  size_t k = j + 1;
  while (k < n && (is_identifier_char(text[k]) || text[k] == '.')) ++k;
  if (k < n && text[k] == ':') {  // a format spec: no space, no brace
    ++k;
    while (k < n && text[k] != '}' && text[k] != '{' && text[k] != ' ') ++k;
  }
  if (k < n && text[k] == '}') return k + 1 - i;
  return 0;
}

// A side cut into text and format specifiers: "%s:%d" -> "%s" ":" "%d".
struct Piece {
  std::string text;
  bool is_format = false;
};

std::vector<Piece> split_format_specifiers(const std::string& text) {
  std::vector<Piece> pieces;
  std::string plain;
  for (size_t i = 0; i < text.size();) {
    if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() && text[i + 1] == text[i]) {  // "{{", "}}": text
      plain += text.substr(i, 2);
      i += 2;
      continue;
    }
    size_t length = 0;
    if (text[i] == '%') length = percent_specifier_length(text, i);
    if (text[i] == '{' || text[i] == '$') length = brace_specifier_length(text, i);
    if (length == 0) {  // text up to the next character that may start a specifier
      const size_t next = std::min(text.find_first_of("%{}$", i + 1), text.size());
      plain.append(text, i, next - i);
      i = next;
      continue;
    }
    if (!plain.empty()) pieces.push_back({plain, false});
    plain.clear();
    pieces.push_back({text.substr(i, length), true});
    i += length;
  }
  if (!plain.empty()) pieces.push_back({plain, false});
  return pieces;
}

// Line breaks and tabs (and the other ASCII white space) become spaces.
std::string spaces_for_breaks(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (one_of(c, "\n\r\t\v\f")) c = ' ';
  return out;
}

// Removes every CJK-style accelerator, "(_F)" or "(&F)" with ASCII or full-width parentheses,
// and says whether there was one; *ampersand is set when one used '&'.
bool remove_cjk_accelerators(std::string& text, bool* ampersand) {
  const std::string open_wide = "\xEF\xBC\x88", close_wide = "\xEF\xBC\x89";  // （ ）, U+FF08 U+FF09
  if (text.find('(') == std::string::npos && text.find(open_wide) == std::string::npos) return false;
  bool found = false;
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t open = text[i] == '(' ? 1 : text.compare(i, 3, open_wide) == 0 ? 3 : 0;
    const size_t m = i + open;  // the marker, then the letter, then the closing parenthesis
    if (open > 0 && m + 2 < text.size() && (text[m] == '_' || text[m] == '&') && is_ascii_alnum(text[m + 1])) {
      const size_t close = text[m + 2] == ')' ? 1 : text.compare(m + 2, 3, close_wide) == 0 ? 3 : 0;
      if (close > 0) {
        found = true;
        if (text[m] == '&') *ampersand = true;
        i = m + 2 + close;
        continue;
      }
    }
    out += text[i++];
  }
  text = out;
  return found;
}

// Does `text` hold `word` as a whole word, not inside a longer run of letters, digits and '_'?
bool holds_word(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_identifier_char(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_identifier_char(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

bool is_capital_or_digit(char c) { return (c >= 'A' && c <= 'Z') || is_digit(c); }

// The positions in `text` of the '_' and '&' that may be accelerators: before an ASCII letter
// or digit, in a word (the run of letters, digits and '_' around it) that `other` does not
// hold. Never one: "&&" (an escaped '&'), an entity such as "&lt;" or "&#38;", and a '_' that
// joins the parts of a name: between two capitals or digits (LC_ALL, KP_Up, PGEVT_CONNRESET),
// or in a word with another '_' (DW_MACRO_GNU_define).
std::vector<size_t> marker_positions(const std::string& text, const std::string& other) {
  std::vector<size_t> positions;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '&') {
      size_t j = i + 1;
      while (j < text.size() && (is_ascii_alnum(text[j]) || text[j] == '#')) ++j;
      if (text[i + 1] == '&' || (j > i + 1 && j < text.size() && text[j] == ';')) {
        i = text[i + 1] == '&' ? i + 1 : j;  // past the "&&" or the entity
        continue;
      }
    }
    if ((text[i] != '_' && text[i] != '&') || !is_ascii_alnum(text[i + 1])) continue;
    if (text[i] == '_' && i > 0 && is_capital_or_digit(text[i - 1]) && is_capital_or_digit(text[i + 1])) continue;
    size_t start = i, end = i + 1;
    while (start > 0 && is_identifier_char(text[start - 1])) --start;
    while (end < text.size() && is_identifier_char(text[end])) ++end;
    const std::string word = text.substr(start, end - start);
    if (std::count(word.begin(), word.end(), '_') > 1) continue;  // a name: DW_MACRO_GNU_define
    if (!holds_word(other, word)) positions.push_back(i);
  }
  return positions;
}

// `text` without the markers at `positions`, and with "&&" as "&" if `unescape_ampersands`.
std::string without_markers(const std::string& text, const std::vector<size_t>& positions, bool unescape_ampersands) {
  if (positions.empty() && !unescape_ampersands) return text;
  std::string out;
  size_t next = 0;  // the next marker to drop
  for (size_t i = 0; i < text.size();) {
    if (next < positions.size() && positions[next] == i) {
      ++next;
      ++i;
    } else if (unescape_ampersands && text.compare(i, 2, "&&") == 0) {
      out += '&';
      i += 2;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// The pieces joined, each format specifier set off by spaces, runs of spaces made one, the ends
// trimmed.
std::string join_pieces(const std::vector<Piece>& pieces) {
  std::string joined;
  for (const Piece& p : pieces) joined += p.is_format ? " " + p.text + " " : p.text;
  std::string out;
  for (char c : joined)
    if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

Pair normalize_message_pair(const std::string& source, const std::string& target) {
  const std::string text[2] = {spaces_for_breaks(source), spaces_for_breaks(target)};
  std::vector<Piece> pieces[2] = {split_format_specifiers(text[0]), split_format_specifiers(text[1])};

  // CJK-style accelerators always go. Then the plain markers of each side: the words around
  // them are looked for in the other side, once its CJK-style accelerators are gone.
  bool has_accelerator[2] = {false, false}, ampersand = false;
  std::string rest[2];  // each side's text without its CJK-style accelerators
  for (int s = 0; s < 2; ++s) {
    for (Piece& p : pieces[s]) {
      if (!p.is_format && remove_cjk_accelerators(p.text, &ampersand)) has_accelerator[s] = true;
      rest[s] += p.is_format ? " " + p.text + " " : p.text;
    }
  }
  // A label has one accelerator (msgfmt --check-accelerators holds a translation to exactly
  // one): a side with several markers holds names (ignore_checksum_failure), not a label.
  std::vector<std::vector<size_t>> markers[2];
  for (int s = 0; s < 2; ++s) {
    size_t count = 0;
    for (const Piece& p : pieces[s]) {
      markers[s].push_back(p.is_format ? std::vector<size_t>() : marker_positions(p.text, rest[1 - s]));
      count += markers[s].back().size();
    }
    if (count == 1) has_accelerator[s] = true;
    if (count > 1) markers[s] = std::vector<std::vector<size_t>>(pieces[s].size());
  }
  // A side's marker goes when the other side has an accelerator too; "&&" becomes "&" when an
  // accelerator that goes is an '&'.
  for (int s = 0; s < 2; ++s) {
    if (!has_accelerator[1 - s]) markers[s] = std::vector<std::vector<size_t>>(pieces[s].size());
    for (size_t k = 0; k < pieces[s].size(); ++k)
      for (size_t at : markers[s][k])
        if (pieces[s][k].text[at] == '&') ampersand = true;
  }
  for (int s = 0; s < 2; ++s)
    for (size_t k = 0; k < pieces[s].size(); ++k)
      if (!pieces[s][k].is_format) pieces[s][k].text = without_markers(pieces[s][k].text, markers[s][k], ampersand);
  return {join_pieces(pieces[0]), join_pieces(pieces[1])};
}

// ------------------------------------------------------------------------------------------------
// Entries to pairs

int64_t CatalogDrops::total() const {
  return wrong_charset + header + plural + untranslated + not_utf8 + empty + control + too_long + identical +
         duplicates;
}

CatalogDrops& CatalogDrops::operator+=(const CatalogDrops& o) {
  wrong_charset += o.wrong_charset;
  header += o.header;
  plural += o.plural;
  untranslated += o.untranslated;
  not_utf8 += o.not_utf8;
  empty += o.empty;
  control += o.control;
  too_long += o.too_long;
  identical += o.identical;
  duplicates += o.duplicates;
  return *this;
}

namespace {

bool is_header(const CatalogEntry& e) { return e.source.empty() && e.context.empty() && e.plural_source.empty(); }

std::string lowercase(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

// The charset a header declares: "...\nContent-Type: text/plain; charset=UTF-8\n..." -> "UTF-8".
std::string declared_charset(const std::string& header) {
  const size_t at = lowercase(header).find("charset=");
  if (at == std::string::npos) return "";
  const size_t start = at + 8;
  size_t end = start;
  while (end < header.size() && !one_of(header[end], " ;\t\r\n")) ++end;
  return header.substr(start, end - start);
}

bool is_utf8_charset(const std::string& charset) {
  const std::string c = lowercase(charset);
  return c.empty() || c == "utf-8" || c == "utf8" || c == "ascii" || c == "us-ascii";  // ASCII is UTF-8
}

// Does a side hold text that read_tsv counts (anything but spaces and the ▁ word-start marker)?
bool holds_text(const std::string& side) {
  const std::string marker = "\xE2\x96\x81";  // ▁ U+2581
  for (size_t i = 0; i < side.size();) {
    if (side.compare(i, marker.size(), marker) == 0) {
      i += marker.size();
    } else if (side[i] == ' ') {
      ++i;
    } else {
      return true;
    }
  }
  return false;
}

}  // namespace

CatalogPairs catalog_pairs(const std::vector<CatalogEntry>& entries) {
  CatalogPairs out;
  for (const CatalogEntry& e : entries) {
    if (is_header(e) && !e.targets.empty()) {
      out.charset = declared_charset(e.targets[0]);
      break;
    }
  }
  if (!is_utf8_charset(out.charset)) {
    out.skipped = true;
    out.dropped.wrong_charset = static_cast<int64_t>(entries.size());
    return out;
  }
  std::unordered_set<std::string> kept;
  CatalogDrops& d = out.dropped;
  for (const CatalogEntry& e : entries) {
    if (is_header(e)) {
      ++d.header;
    } else if (!e.plural_source.empty() || e.targets.size() != 1) {
      ++d.plural;
    } else if (e.targets[0].empty()) {
      ++d.untranslated;
    } else if (!io::is_valid_utf8(e.source) || !io::is_valid_utf8(e.targets[0])) {
      ++d.not_utf8;
    } else {
      Pair p = normalize_message_pair(e.source, e.targets[0]);
      if (!holds_text(p.source) || !holds_text(p.target)) {
        ++d.empty;
      } else if (!text_line_problem(p.source).empty() || !text_line_problem(p.target).empty()) {
        ++d.control;
      } else if (p.source.size() + 1 + p.target.size() > kMaxLineBytes) {
        ++d.too_long;
      } else if (p.source == p.target) {
        ++d.identical;
      } else if (!kept.insert(p.source).second) {
        ++d.duplicates;
      } else {
        out.pairs.push_back(std::move(p));
      }
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Programs: repeats, parts, a locale's catalogs

int64_t drop_repeated_sources(std::vector<ProgramPairs>& programs) {
  std::unordered_set<std::string> seen;
  int64_t removed = 0;
  for (ProgramPairs& program : programs) {
    std::vector<Pair>& pairs = program.pairs;
    const auto kept_end =
        std::remove_if(pairs.begin(), pairs.end(), [&](const Pair& p) { return !seen.insert(p.source).second; });
    removed += pairs.end() - kept_end;
    pairs.erase(kept_end, pairs.end());
  }
  return removed;
}

std::string program_part(const std::string& program) {
  Digest hash;  // FNV-1a, 64 bits (data/corpus.h)
  hash.add(program.data(), program.size());
  const uint64_t bucket = hash.fnv1a % 20;
  return bucket == 0 ? "test" : bucket == 1 ? "valid" : "train";
}

std::vector<std::string> catalog_files(const std::string& locale_dir, const std::string& lang) {
  check(!lang.empty() && lang.find('/') == std::string::npos,
        "catalog_files: expected a language such as 'zh_CN', got '", bounded(lang), "'");
  const fs::path folder = fs::path(locale_dir) / lang / "LC_MESSAGES";
  std::error_code ec;
  check_state(fs::is_directory(folder, ec), "catalog_files: expected a folder of catalogs at '", folder.string(),
              "', found none");
  std::vector<std::string> paths;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".mo" && it->is_regular_file(type_ec)) paths.push_back(it->path().string());
  }
  check_state(!ec, "catalog_files: cannot list '", folder.string(), "': ", ec.message());
  check_state(!paths.empty(), "catalog_files: expected .mo files in '", folder.string(), "', found none");
  std::sort(paths.begin(), paths.end());
  return paths;
}

LocaleCatalogs read_locale_catalogs(const std::string& locale_dir, const std::string& lang) {
  LocaleCatalogs out;
  for (const std::string& path : catalog_files(locale_dir, lang)) {
    const std::vector<CatalogEntry> entries = read_mo_file(path);
    CatalogPairs catalog = catalog_pairs(entries);
    out.entries += static_cast<int64_t>(entries.size());
    out.dropped += catalog.dropped;
    if (catalog.skipped) ++out.skipped_catalogs;
    out.programs.push_back({fs::path(path).stem().string(), std::move(catalog.pairs)});
  }
  out.dropped.duplicates += drop_repeated_sources(out.programs);
  return out;
}

}  // namespace seqgrad::data
