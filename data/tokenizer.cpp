// data/tokenizer.cpp - whitespace and UTF-8 character splitting.
#include "data/tokenizer.h"

#include "tensor/check.h"

namespace seqgrad::data {

std::vector<std::string> split_whitespace(const std::string& text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char ch : text) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v') {
      if (!current.empty()) tokens.push_back(current);
      current.clear();
    } else {
      current += ch;
    }
  }
  if (!current.empty()) tokens.push_back(current);
  return tokens;
}

std::vector<std::string> split_chars(const std::string& text) {
  // A UTF-8 code point is 1 byte (0xxxxxxx) or a lead byte 110xxxxx / 1110xxxx / 11110xxx
  // followed by 1, 2 or 3 continuation bytes 10xxxxxx.
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    check(len > 0 && i + len <= text.size(), "split_chars: invalid UTF-8 at byte ", i);
    for (size_t k = 1; k < len; ++k)
      check((static_cast<unsigned char>(text[i + k]) >> 6) == 0x2, "split_chars: invalid UTF-8 at byte ", i + k);
    tokens.push_back(text.substr(i, len));
    i += len;
  }
  return tokens;
}

std::string join(const std::vector<std::string>& tokens, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) out += (i ? separator : "") + tokens[i];
  return out;
}

std::vector<std::string> tokenize(const std::string& text, Tokenization kind) {
  return kind == Tokenization::Space ? split_whitespace(text) : split_chars(text);
}

std::string detokenize(const std::vector<std::string>& tokens, Tokenization kind) {
  return join(tokens, kind == Tokenization::Space ? " " : "");
}

}  // namespace seqgrad::data
