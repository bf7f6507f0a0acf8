// tests/viz/svg_check.h - a tiny well-formedness checker for the SVG files viz/ writes.
//
// Not a full XML parser: it checks what a browser needs to open the file and what our writer
// could plausibly get wrong - a root <svg> with the SVG namespace, every tag closed in order,
// quoted attributes without '<', only known entities after '&', no bare '>' in text, comments
// without "--", valid UTF-8 throughout, nothing after the root. Returns "" when all is well,
// else the first problem and its byte offset.
#pragma once

#include <string>
#include <vector>

namespace seqgrad::testing {

inline std::string svg_problem(const std::string& doc) {
  const auto at = [](const std::string& what, size_t i) { return what + " at byte " + std::to_string(i); };
  const size_t npos = std::string::npos;
  if (doc.rfind("<svg ", 0) != 0) return "does not start with <svg";
  const size_t root_end = doc.find('>');
  if (doc.substr(0, root_end).find("xmlns=\"http://www.w3.org/2000/svg\"") == npos)
    return "the root has no xmlns=\"http://www.w3.org/2000/svg\"";

  // UTF-8: a lead byte followed by the right number of continuation bytes.
  for (size_t i = 0; i < doc.size();) {
    const unsigned char c = static_cast<unsigned char>(doc[i]);
    const size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > doc.size()) return at("invalid UTF-8", i);
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(doc[i + k]) & 0xC0) != 0x80) return at("invalid UTF-8", i);
    if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') return at("control character", i);
    i += n;
  }

  // '&' must start one of the five entities.
  const auto entity_ok = [&](size_t i) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
      if (doc.compare(i, std::string(e).size(), e) == 0) return true;
    return false;
  };
  const auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == ':' || c == '_';
  };

  std::vector<std::string> open;
  bool root_closed = false;
  for (size_t i = 0; i < doc.size();) {
    const char c = doc[i];
    if (root_closed && c != '\n' && c != ' ') return at("content after </svg>", i);
    if (c == '&' && !entity_ok(i)) return at("bare '&'", i);
    if (c == '>') return at("bare '>' in text", i);
    if (c != '<') {
      ++i;
      continue;
    }
    if (doc.compare(i, 4, "<!--") == 0) {
      const size_t end = doc.find("-->", i + 4);
      if (end == npos) return at("unterminated comment", i);
      if (doc.substr(i + 4, end - i - 4).find("--") != npos) return at("\"--\" inside a comment", i);
      i = end + 3;
      continue;
    }
    if (doc.compare(i, 2, "</") == 0) {
      const size_t end = doc.find('>', i);
      if (end == npos) return at("unterminated closing tag", i);
      const std::string name = doc.substr(i + 2, end - i - 2);
      if (open.empty() || open.back() != name)
        return at("</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">"), i);
      open.pop_back();
      root_closed = open.empty();
      i = end + 1;
      continue;
    }
    // An opening tag: <name attr="value" ...> or <name ... />
    size_t j = i + 1;
    while (j < doc.size() && is_name_char(doc[j])) ++j;
    const std::string name = doc.substr(i + 1, j - i - 1);
    if (name.empty()) return at("'<' not followed by a tag name", i);
    bool self_closing = false;
    for (;;) {
      while (j < doc.size() && doc[j] == ' ') ++j;
      if (j >= doc.size()) return at("unterminated <" + name + ">", i);
      if (doc[j] == '>') break;
      if (doc.compare(j, 2, "/>") == 0) {
        self_closing = true;
        ++j;
        break;
      }
      const size_t a = j;
      while (j < doc.size() && is_name_char(doc[j])) ++j;
      if (j == a || j + 1 >= doc.size() || doc[j] != '=' || (doc[j + 1] != '"' && doc[j + 1] != '\''))
        return at("malformed attribute in <" + name + ">", j);
      const char quote = doc[j + 1];
      const size_t end = doc.find(quote, j + 2);
      if (end == npos) return at("unterminated attribute value in <" + name + ">", j);
      for (size_t k = j + 2; k < end; ++k) {
        if (doc[k] == '<') return at("'<' inside an attribute value", k);
        if (doc[k] == '&' && !entity_ok(k)) return at("bare '&' in an attribute value", k);
      }
      j = end + 1;
    }
    if (!self_closing) open.push_back(name);
    i = j + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_closed) return "no root element";
  return "";
}

// How many times `needle` occurs in `haystack`.
inline int count_of(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + needle.size())) ++n;
  return n;
}

}  // namespace seqgrad::testing
