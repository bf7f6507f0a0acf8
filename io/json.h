// io/json.h - a small JSON value, parser and writer: enough for checkpoint headers.
//
// Json holds one of null, true/false, a number, a UTF-8 string, an array or an object. Objects
// keep their keys in document order (safetensors headers are read in the order they were
// written) and never hold a key twice. The parser is strict RFC 8259: no comments, no trailing
// commas, no NaN; strings must be valid UTF-8 and \uXXXX escapes (surrogate pairs included)
// become UTF-8. It never reads past the end of its input, limits nesting to kMaxJsonDepth so
// hostile input cannot exhaust the stack, and reports errors with the byte offset.
// What this is not: a general-purpose JSON library (no pointers, no patches, no streaming).
// Read next: safetensors.h, its main user.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace seqgrad::io {

// Arrays and objects deeper than this are rejected by the parser.
constexpr int kMaxJsonDepth = 64;

class Json {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;  // document order, unique keys

  // ---- construction -------------------------------------------------------------------------
  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool value) : type_(Type::Bool), bool_(value) {}
  Json(double value);  // finite values only: JSON has no NaN or infinity
  // Any integer type except bool and char (Json('a') does not compile rather than become 97).
  // The value is kept exactly, up to 2^63 - 1.
  template <class I,
            std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> && !std::is_same_v<I, char>, int> = 0>
  Json(I value) : Json(integer_from(value)) {}
  Json(const char* value) : type_(Type::String), string_(value) {}
  Json(std::string value) : type_(Type::String), string_(std::move(value)) {}
  Json(std::string_view value) : type_(Type::String), string_(value) {}
  Json(Array items) : type_(Type::Array), array_(std::move(items)) {}
  Json(Object members);  // throws std::invalid_argument on a repeated key

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  // ---- inspection ---------------------------------------------------------------------------
  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_number() const { return type_ == Type::Number; }
  // A number written without fraction or exponent that fits in int64 ("12", "-3"; not "1.0").
  bool is_integer() const { return type_ == Type::Number && is_integer_; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  // Typed access; each throws std::runtime_error "json: expected a string, got number" when
  // the value has another type.
  bool as_bool() const;
  double as_double() const;
  int64_t as_int64() const;  // integers only: 1.5 and 1e3 are rejected
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;

  // Number of items of an array or members of an object (0 for anything else).
  size_t size() const;
  // The member called `key`, or nullptr when this is not an object or has no such member.
  const Json* find(std::string_view key) const;

  // ---- building -----------------------------------------------------------------------------
  // Appends to an array; sets (replacing or appending) an object member.
  Json& push_back(Json item);
  Json& set(std::string key, Json value);

  // ---- writing ------------------------------------------------------------------------------
  // Compact JSON text (no spaces), strings escaped as JSON requires and otherwise left as
  // UTF-8. Throws std::invalid_argument when a string is not valid UTF-8.
  std::string dump() const;

  friend bool operator==(const Json& a, const Json& b);
  friend bool operator!=(const Json& a, const Json& b) { return !(a == b); }

 private:
  struct IntegerTag {};
  Json(IntegerTag, int64_t value)
      : type_(Type::Number), number_(static_cast<double>(value)), integer_(value), is_integer_(true) {}
  template <class I>
  static Json integer_from(I value) {
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) check_fits_int64(value);
    return Json(IntegerTag{}, static_cast<int64_t>(value));
  }
  static void check_fits_int64(unsigned long long value);
  void dump_to(std::string& out) const;
  friend class JsonParser;

  Type type_ = Type::Null;
  bool bool_ = false;
  double number_ = 0;
  int64_t integer_ = 0;
  bool is_integer_ = false;
  std::string string_;
  Array array_;
  Object object_;
};

// "null", "boolean", "number", "string", "array" or "object", for messages.
const char* type_name(Json::Type type);

// Parses one JSON document (surrounding whitespace allowed). Throws std::runtime_error naming
// the byte offset, what was expected and what was found:
//   json: expected ',' or '}' at byte 57, got 'x'
Json parse_json(std::string_view text);

// A string as a JSON string literal, quotes included: json_quote("a\"b") == "\"a\\\"b\"".
std::string json_quote(std::string_view text);

std::ostream& operator<<(std::ostream& os, const Json& value);

}  // namespace seqgrad::io
