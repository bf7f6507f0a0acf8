// data/tokenizer.h - splitting text into tokens: on whitespace, or into Unicode characters; and
// the registry of tokenizers the seqgrad tool cuts each side of its data with.
//
// Character tokenisation is UTF-8 aware: "比利 吃" becomes {"比", "利", " ", "吃"}, one token
// per code point, never a broken byte. Invalid UTF-8 is an error naming the byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/registry.h"

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

// ================================================================================================
// Tokenizers by name: "space", "char", "bpe" (data/bpe.h), and whatever else registers
//
// `seqgrad train --src-tokens NAME --tgt-tokens NAME` cuts each side with the tokenizer of that
// name. A tokenizer may learn from the training text first (bpe: its merges). What it learned is a
// list of strings that the checkpoint keeps ("seqgrad.src_NAME", "seqgrad.tgt_NAME"), so a model
// needs no file besides its own; whatever encode() needs after training belongs in that list.
// Its options (bpe's --bpe-merges) are the tool's flags, refused when no side uses it.
//   SEQGRAD_REGISTER_TOKENIZER("char", "one token per character",
//                              [](const Settings&) { return std::make_unique<CharTokenizer>(); });

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // text -> tokens, at most max_tokens of them (those after need not be made at all).
  virtual std::vector<std::string> encode(const std::string& text, size_t max_tokens = SIZE_MAX) const = 0;
  // tokens -> text: decode(encode(text)) is the text, up to how it was spaced.
  virtual std::string decode(const std::vector<std::string>& tokens) const = 0;

  // Does it learn from the training text? If so, learn() runs on one side of the training
  // pairs before anything is encoded (`side`: "source" or "target", for what it prints on
  // `out`), learned() is what the checkpoint keeps, and restore() takes it back when the
  // checkpoint loads (checking it: a damaged list is an error naming the entry).
  virtual bool learns() const { return false; }
  virtual void learn(const std::vector<std::string_view>& sentences, const std::string& side, std::ostream& out);
  virtual std::vector<std::string> learned() const { return {}; }
  virtual void restore(const std::vector<std::string>& learned);

  // Are the tokens pieces of words (bpe)? Scores then compare words: a wrong word counts once,
  // however many pieces it has (as BLEU is reported after BPE is undone).
  virtual bool pieces_of_words() const { return false; }
  // Can a token be the space " " (char)? Otherwise a checkpoint whose vocabulary has a space in
  // a token was damaged, and is refused.
  virtual bool space_is_a_token() const { return false; }
};

struct TokenizerEntry {
  std::string name, help;
  // A new tokenizer, nothing learned yet; `settings` holds a value for each of `options`.
  std::function<std::unique_ptr<Tokenizer>(const Settings& settings)> make;
  std::vector<Option> options = {};
};
Registry<TokenizerEntry>& tokenizers();
#define SEQGRAD_REGISTER_TOKENIZER(...) \
  SEQGRAD_REGISTER(::seqgrad::data::tokenizers(), ::seqgrad::data::TokenizerEntry{__VA_ARGS__})

// A new tokenizer of the kind named `name` (a name the registry does not have is an error listing
// them), with the options in `given` and the defaults of the others.
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& name, const Settings& given = {});

}  // namespace seqgrad::data
