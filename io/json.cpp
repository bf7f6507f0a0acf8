// io/json.cpp - the Json value, a recursive-descent parser and a compact writer.
//
// The grammar is RFC 8259's, read one byte at a time through JsonParser::peek(), which returns
// "end of input" instead of reading past it; the two places that take a run of bytes at once
// (a UTF-8 sequence, a number's digits) check its length first. Nesting is bounded by
// kMaxJsonDepth, so the recursion depth is bounded too.
#include "io/json.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "io/utf8.h"
#include "tensor/check.h"

namespace seqgrad::io {

// ================================================================================================
// The value

Json::Json(double value) : type_(Type::Number), number_(value) {
  check(std::isfinite(value), "json: expected a finite number, got ", value);
}

Json::Json(Object members) : type_(Type::Object) {
  std::set<std::string_view> seen;
  for (const auto& member : members)
    if (!seen.insert(member.first).second)
      throw std::invalid_argument("json: duplicate key " + bounded(json_quote(member.first)));
  seen.clear();  // it points into `members`, which is about to move
  object_ = std::move(members);
}

void Json::check_fits_int64(unsigned long long value) {
  check(value <= static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()),
        "json: expected an integer up to 2^63 - 1, got ", value);
}

// "0x0a": one byte in hex, for messages about bytes that cannot be printed.
static std::string hex_byte(int byte) {
  static const char* const kHex = "0123456789abcdef";
  return cat("0x", kHex[(byte >> 4) & 0xF], kHex[byte & 0xF]);
}

const char* type_name(Json::Type type) {
  switch (type) {
    case Json::Type::Null: return "null";
    case Json::Type::Bool: return "boolean";
    case Json::Type::Number: return "number";
    case Json::Type::String: return "string";
    case Json::Type::Array: return "array";
    case Json::Type::Object: return "object";
  }
  return "?";
}

// "json: expected a string, got number"
static void check_type(Json::Type have, Json::Type want) {
  check_state(have == want, "json: expected ", want == Json::Type::Array || want == Json::Type::Object ? "an " : "a ",
              type_name(want), ", got ", type_name(have));
}

bool Json::as_bool() const {
  check_type(type_, Type::Bool);
  return bool_;
}

double Json::as_double() const {
  check_type(type_, Type::Number);
  return number_;
}

int64_t Json::as_int64() const {
  check_type(type_, Type::Number);
  if (!is_integer_) throw std::runtime_error("json: expected an integer, got " + dump());
  return integer_;
}

const std::string& Json::as_string() const {
  check_type(type_, Type::String);
  return string_;
}

const Json::Array& Json::as_array() const {
  check_type(type_, Type::Array);
  return array_;
}

const Json::Object& Json::as_object() const {
  check_type(type_, Type::Object);
  return object_;
}

size_t Json::size() const {
  if (type_ == Type::Array) return array_.size();
  if (type_ == Type::Object) return object_.size();
  return 0;
}

const Json* Json::find(std::string_view key) const {
  if (type_ != Type::Object) return nullptr;
  for (const auto& member : object_)
    if (member.first == key) return &member.second;
  return nullptr;
}

Json& Json::push_back(Json item) {
  check_type(type_, Type::Array);
  array_.push_back(std::move(item));
  return *this;
}

Json& Json::set(std::string key, Json value) {
  check_type(type_, Type::Object);
  for (auto& member : object_)
    if (member.first == key) {
      member.second = std::move(value);
      return *this;
    }
  object_.emplace_back(std::move(key), std::move(value));
  return *this;
}

bool operator==(const Json& a, const Json& b) {
  if (a.type_ != b.type_) return false;
  switch (a.type_) {
    case Json::Type::Null: return true;
    case Json::Type::Bool: return a.bool_ == b.bool_;
    case Json::Type::Number: return a.is_integer_ && b.is_integer_ ? a.integer_ == b.integer_ : a.number_ == b.number_;
    case Json::Type::String: return a.string_ == b.string_;
    case Json::Type::Array: return a.array_ == b.array_;
    case Json::Type::Object: return a.object_ == b.object_;
  }
  return false;
}

// ================================================================================================
// UTF-8 (checked by io/utf8.h)

// Appends code point `cp` in its shortest UTF-8 form (a \uXXXX escape read by the parser).
static void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// ================================================================================================
// Writing

std::string json_quote(std::string_view text) {
  size_t bad = 0;
  if (!io::is_valid_utf8(text, &bad))
    throw std::invalid_argument(cat("json: expected a UTF-8 string, got byte ",
                                    hex_byte(static_cast<unsigned char>(text[bad])), " at byte ", bad));
  static const char* const kHex = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {  // other control characters: \u00XX
          out += "\\u00";
          out += kHex[(c >> 4) & 0xF];
          out += kHex[c & 0xF];
        } else {
          out += c;  // everything else, multi-byte UTF-8 included, goes out as it is
        }
    }
  }
  return out + "\"";
}

void Json::dump_to(std::string& out) const {
  switch (type_) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += bool_ ? "true" : "false"; break;
    case Type::Number: {
      // Integers exactly; other numbers as the shortest text that reads back as the same
      // double, with ".0" added where that text looks like an integer (2.0 stays "2.0"), so
      // a value written and read again keeps is_integer().
      char buf[32];
      const auto r =
          is_integer_ ? std::to_chars(buf, buf + sizeof buf, integer_) : std::to_chars(buf, buf + sizeof buf, number_);
      const std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
      out += text;
      if (!is_integer_ && text.find_first_of(".e") == std::string_view::npos) out += ".0";
      break;
    }
    case Type::String: out += json_quote(string_); break;
    case Type::Array:
      out += '[';
      for (size_t i = 0; i < array_.size(); ++i) {
        if (i > 0) out += ',';
        array_[i].dump_to(out);
      }
      out += ']';
      break;
    case Type::Object:
      out += '{';
      for (size_t i = 0; i < object_.size(); ++i) {
        if (i > 0) out += ',';
        out += json_quote(object_[i].first);
        out += ':';
        object_[i].second.dump_to(out);
      }
      out += '}';
      break;
  }
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Json& value) { return os << value.dump(); }

// ================================================================================================
// Parsing

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  Json parse_document() {
    skip_whitespace();
    Json value = parse_value(/*depth=*/0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("end of input");
    return value;
  }

 private:
  // The byte at pos_ + ahead, or -1 past the end.
  int peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? static_cast<unsigned char>(text_[pos_ + ahead]) : -1;
  }

  // What peek() sees, for messages: 'x', byte 0x01, or end of input.
  std::string describe_next() const {
    const int c = peek();
    if (c < 0) return "end of input";
    if (c >= 0x20 && c < 0x7F) return cat('\'', static_cast<char>(c), '\'');
    return "byte " + hex_byte(c);
  }

  [[noreturn]] void fail(const std::string& expected) const {
    throw std::runtime_error(cat("json: expected ", expected, " at byte ", pos_, ", got ", describe_next()));
  }

  void skip_whitespace() {
    for (int c = peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek()) ++pos_;
  }

  void expect(char c, const char* what) {
    if (peek() != c) fail(what);
    ++pos_;
  }

  // value = object | array | string | number | true | false | null
  Json parse_value(int depth) {
    switch (peek()) {
      case '{': return parse_object(depth + 1);
      case '[': return parse_array(depth + 1);
      case '"': return Json(parse_string());
      case 't': return parse_literal("true", Json(true));
      case 'f': return parse_literal("false", Json(false));
      case 'n': return parse_literal("null", Json());
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number();
        fail("a value");
    }
  }

  Json parse_literal(std::string_view word, Json value) {
    for (const char c : word) expect(c, cat('\'', word, '\'').c_str());
    return value;
  }

  void check_depth(int depth) const {
    if (depth > kMaxJsonDepth)
      throw std::runtime_error(
          cat("json: expected at most ", kMaxJsonDepth, " nested arrays and objects at byte ", pos_, ", got more"));
  }

  // object = '{' [ string ':' value { ',' string ':' value } ] '}'
  Json parse_object(int depth) {
    check_depth(depth);
    expect('{', "'{'");
    Json out = Json::object();
    std::set<std::string> keys;  // a set, so that a header with many keys stays O(n log n)
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return out;
    }
    for (;;) {
      skip_whitespace();
      if (peek() != '"') fail("a string key");
      const size_t key_at = pos_;
      std::string key = parse_string();
      if (!keys.insert(key).second)
        throw std::runtime_error(cat("json: duplicate key ", bounded(json_quote(key)), " at byte ", key_at));
      skip_whitespace();
      expect(':', "':'");
      skip_whitespace();
      out.object_.emplace_back(std::move(key), parse_value(depth));
      skip_whitespace();
      if (peek() == '}') {
        ++pos_;
        return out;
      }
      expect(',', "',' or '}'");
    }
  }

  // array = '[' [ value { ',' value } ] ']'
  Json parse_array(int depth) {
    check_depth(depth);
    expect('[', "'['");
    Json out = Json::array();
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return out;
    }
    for (;;) {
      skip_whitespace();
      out.array_.push_back(parse_value(depth));
      skip_whitespace();
      if (peek() == ']') {
        ++pos_;
        return out;
      }
      expect(',', "',' or ']'");
    }
  }

  // number = [ '-' ] ( '0' | [1-9] digits ) [ '.' digits ] [ ( 'e' | 'E' ) [ '+' | '-' ] digits ]
  Json parse_number() {
    const size_t start = pos_;
    const auto digits = [&] {
      if (!(peek() >= '0' && peek() <= '9')) fail("a digit");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0')
      ++pos_;  // no leading zeros: "01" stops after the 0
    else
      digits();
    bool integer = true;
    if (peek() == '.') {
      ++pos_;
      digits();
      integer = false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      digits();
      integer = false;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integer) {  // exact when it fits in int64; otherwise it is kept as a double below
      int64_t i = 0;
      const auto r = std::from_chars(first, last, i);
      if (r.ec == std::errc() && r.ptr == last) return Json(i);
    }
    double d = 0;
    const auto r = std::from_chars(first, last, d);
    if (r.ec != std::errc() || !std::isfinite(d)) {
      pos_ = start;
      fail("a number within the range of a double");
    }
    return Json(d);
  }

  // The 4 hex digits of a \uXXXX escape, pos_ at the first digit.
  uint32_t parse_hex4() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int c = peek();
      int digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else
        fail("a hex digit");
      v = v * 16 + static_cast<uint32_t>(digit);
      ++pos_;
    }
    return v;
  }

  // string = '"' { unescaped UTF-8 | '\' escape } '"'; returns the decoded UTF-8 text.
  std::string parse_string() {
    expect('"', "'\"'");
    std::string out;
    for (;;) {
      const int c = peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0) fail("'\"' (the string is not closed)");
      if (c < 0x20) fail("a string character (control characters must be escaped)");
      if (c == '\\') {
        ++pos_;
        parse_escape(out);
        continue;
      }
      const size_t n = io::utf8_sequence_length(text_, pos_);
      if (n == 0) fail("a UTF-8 character");
      out.append(text_.substr(pos_, n));
      pos_ += n;
    }
  }

  // After a backslash: one of " \ / b f n r t, or uXXXX (a UTF-16 code unit). Characters
  // above U+FFFF arrive as a surrogate pair, \uD83D\uDE00 = U+1F600, and become one UTF-8
  // sequence; a surrogate without its partner is an error.
  void parse_escape(std::string& out) {
    const int c = peek();
    const char* simple = nullptr;
    switch (c) {
      case '"': simple = "\""; break;
      case '\\': simple = "\\"; break;
      case '/': simple = "/"; break;
      case 'b': simple = "\b"; break;
      case 'f': simple = "\f"; break;
      case 'n': simple = "\n"; break;
      case 'r': simple = "\r"; break;
      case 't': simple = "\t"; break;
      case 'u': break;
      default: fail("an escape character (one of \" \\ / b f n r t u)");
    }
    ++pos_;
    if (simple) {
      out += simple;
      return;
    }
    const size_t unit_at = pos_;
    uint32_t cp = parse_hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      pos_ = unit_at;
      fail("a code unit that is not a low surrogate (DC00-DFFF) unless it follows a high one");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
      if (peek() != '\\' || peek(1) != 'u') fail("'\\u' and a low surrogate after the high surrogate");
      pos_ += 2;
      const size_t low_at = pos_;
      const uint32_t low = parse_hex4();
      if (low < 0xDC00 || low > 0xDFFF) {
        pos_ = low_at;
        fail("a low surrogate (DC00-DFFF) after the high surrogate");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

Json parse_json(std::string_view text) { return JsonParser(text).parse_document(); }

}  // namespace seqgrad::io
