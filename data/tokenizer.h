// data/tokenizer.h - splitting text into tokens: on whitespace, or into Unicode characters.
//
// Character tokenisation is UTF-8 aware: "比利 吃" becomes {"比", "利", " ", "吃"}, one token
// per code point, never a broken byte. Invalid UTF-8 is an error naming the byte offset.
#pragma once

#include <string>
#include <vector>

namespace seqgrad::data {

// "billy  eats a\tbanana" -> {"billy", "eats", "a", "banana"}
std::vector<std::string> split_whitespace(const std::string& text);
// One token per UTF-8 code point, spaces included.
std::vector<std::string> split_chars(const std::string& text);
// The inverse of either: tokens joined with `separator` ("" for characters, " " for words).
std::string join(const std::vector<std::string>& tokens, const std::string& separator);

enum class Tokenization { Space, Char };
std::vector<std::string> tokenize(const std::string& text, Tokenization kind);
std::string detokenize(const std::vector<std::string>& tokens, Tokenization kind);

}  // namespace seqgrad::data
