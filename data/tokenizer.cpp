// data/tokenizer.cpp - whitespace and UTF-8 character splitting; the tokenizer registry, and its
// "space" and "char" tokenizers ("bpe" registers in data/bpe.cpp).
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

// ================================================================================================
// The registry

void Tokenizer::learn(const std::vector<std::string_view>&, const std::string&, std::ostream&) {}

void Tokenizer::restore(const std::vector<std::string>& learned) {
  check(learned.empty(), "this tokenizer learns nothing, but was given ", learned.size(), " learned entries");
}

Registry<TokenizerEntry>& tokenizers() {
  static Registry<TokenizerEntry> registry("tokenizer");
  return registry;
}

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& name, const Settings& given) {
  const TokenizerEntry& entry = tokenizers().get(name);
  return entry.make(complete_settings(entry.options, given, "the " + name + " tokenizer"));
}

namespace {

// The first max_tokens of `tokens` (all of them when there are fewer).
std::vector<std::string> at_most(std::vector<std::string> tokens, size_t max_tokens) {
  if (tokens.size() > max_tokens) tokens.resize(max_tokens);
  return tokens;
}

// "billy ate" <-> {"billy", "ate"}: words, as split_whitespace finds them, joined by one space.
class SpaceTokenizer : public Tokenizer {
 public:
  std::vector<std::string> encode(const std::string& text, size_t max_tokens) const override {
    return at_most(split_whitespace(text), max_tokens);
  }
  std::string decode(const std::vector<std::string>& tokens) const override { return join(tokens, " "); }
};

// "比利 吃" <-> {"比", "利", " ", "吃"}: UTF-8 characters, the space among them.
class CharTokenizer : public Tokenizer {
 public:
  std::vector<std::string> encode(const std::string& text, size_t max_tokens) const override {
    return at_most(split_chars(text), max_tokens);
  }
  std::string decode(const std::vector<std::string>& tokens) const override { return join(tokens, ""); }
  bool space_is_a_token() const override { return true; }
};

}  // namespace

SEQGRAD_REGISTER_TOKENIZER("space", "words, split at white space",
                           [](const Settings&) { return std::make_unique<SpaceTokenizer>(); })
SEQGRAD_REGISTER_TOKENIZER("char", "one token per UTF-8 character, spaces included",
                           [](const Settings&) { return std::make_unique<CharTokenizer>(); })

}  // namespace seqgrad::data
