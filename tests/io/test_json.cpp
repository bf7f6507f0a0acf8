// tests/nn/test_json.cpp - the JSON value, parser and writer behind checkpoint headers.
#include "tests/test_util.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include "io/json.h"

using namespace seqgrad;
using io::Json;
using io::parse_json;

TEST_CASE("json parses every kind of value") {
  const Json v = parse_json(R"( {"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d"}, "e": []} )");
  REQUIRE(v.is_object());
  CHECK(v.size() == 3);
  const Json::Array& a = v.find("a")->as_array();
  REQUIRE(a.size() == 7);
  CHECK(a[0].is_integer());
  CHECK(a[0].as_int64() == 1);
  CHECK(a[1].as_int64() == -2);
  CHECK(a[2].as_double() == 3.5);
  CHECK_FALSE(a[2].is_integer());
  CHECK(a[3].as_double() == 1000);
  CHECK_FALSE(a[3].is_integer());  // written with an exponent: a number, not an integer
  CHECK(a[4].as_bool() == true);
  CHECK(a[5].as_bool() == false);
  CHECK(a[6].is_null());
  CHECK(v.find("b")->find("c")->as_string() == "d");
  CHECK(v.find("e")->size() == 0);
  CHECK(v.find("missing") == nullptr);
  // Keys keep their document order.
  CHECK(v.as_object()[0].first == "a");
  CHECK(v.as_object()[2].first == "e");
}

TEST_CASE("json keeps integers exact up to int64") {
  CHECK(parse_json("9223372036854775807").as_int64() == 9223372036854775807LL);
  CHECK(parse_json("-9223372036854775808").as_int64() == std::numeric_limits<int64_t>::min());
  CHECK(parse_json("-0").as_int64() == 0);
  // One past the largest int64 is still a number, but no longer an integer.
  const Json big = parse_json("9223372036854775808");
  CHECK(big.is_number());
  CHECK_FALSE(big.is_integer());
  CHECK_THROWS_WITH_AS(big.as_int64(), "json: expected an integer, got 9223372036854775808.0", std::runtime_error);
}

TEST_CASE("json string escapes, \\u escapes and surrogate pairs become UTF-8") {
  CHECK(parse_json(R"("a\"b\\c\/d\b\f\n\r\t")").as_string() == "a\"b\\c/d\b\f\n\r\t");
  CHECK(parse_json(R"("\u0041\u00e9\u4e2d")").as_string() == "A\xc3\xa9\xe4\xb8\xad");  // A é 中
  CHECK(parse_json(R"("\uD83D\uDE00")").as_string() == "\xf0\x9f\x98\x80");             // 😀
  CHECK(parse_json(R"("\u0000")").as_string() == std::string(1, '\0'));
  // Raw UTF-8 passes through unchanged.
  CHECK(parse_json("\"\xe4\xb8\xad\xe6\x96\x87\"").as_string() == "\xe4\xb8\xad\xe6\x96\x87");  // 中文
}

TEST_CASE("json writer escapes what it must and round-trips") {
  CHECK(Json("a\"b\\c\n\x01").dump() == R"("a\"b\\c\n\u0001")");
  CHECK(Json("\xe4\xb8\xad").dump() == "\"\xe4\xb8\xad\"");  // UTF-8 stays UTF-8
  Json v = Json::object();
  v.set("n", 42).set("x", 0.1).set("s", "t\tu").set("l", Json(Json::Array{Json(true), Json(), Json(-7)}));
  CHECK(v.dump() == R"({"n":42,"x":0.1,"s":"t\tu","l":[true,null,-7]})");
  CHECK(parse_json(v.dump()) == v);
  CHECK(Json(2.0).dump() == "2.0");  // a double stays a double when read back
  CHECK_FALSE(parse_json(Json(2.0).dump()).is_integer());
  CHECK(Json(-1e20).dump() == "-1e+20");
  v.set("n", 43);  // set replaces an existing member in place
  CHECK(v.dump().substr(0, 8) == R"({"n":43,)");
  const std::string tricky = std::string("quote\" back\\ nul") + '\0' + "\x1f \xf0\x9f\x98\x80 \xc3\xa9";
  CHECK(parse_json(Json(tricky).dump()).as_string() == tricky);
  CHECK_THROWS_WITH_AS(Json("ab\xff").dump(), "json: expected a UTF-8 string, got byte 0xff at byte 2",
                       std::invalid_argument);
}

TEST_CASE("json errors name the byte offset, what was expected and what was found") {
  CHECK_THROWS_WITH_AS(parse_json(R"({"a": 1 x})"), "json: expected ',' or '}' at byte 8, got 'x'", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("[1, 2"), "json: expected ',' or ']' at byte 5, got end of input",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(""), "json: expected a value at byte 0, got end of input", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("{1: 2}"), "json: expected a string key at byte 1, got '1'", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(R"({"a" 1})"), "json: expected ':' at byte 5, got '1'", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("[1,]"), "json: expected a value at byte 3, got ']'", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("tru"), "json: expected 'true' at byte 3, got end of input", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("01"), "json: expected end of input at byte 1, got '1'", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("1."), "json: expected a digit at byte 2, got end of input", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("-"), "json: expected a digit at byte 1, got end of input", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("1e999"), "json: expected a number within the range of a double at byte 0, got '1'",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("{} {}"), "json: expected end of input at byte 3, got '{'", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(R"({"a": 1, "a": 2})"), "json: duplicate key \"a\" at byte 9", std::runtime_error);
}

TEST_CASE("json string errors: unclosed, control characters, bad escapes, lone surrogates, bad UTF-8") {
  CHECK_THROWS_WITH_AS(parse_json(R"("abc)"),
                       "json: expected '\"' (the string is not closed) at byte 4, got end of input",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(
      parse_json("\"a\nb\""),
      "json: expected a string character (control characters must be escaped) at byte 2, got byte 0x0a",
      std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(R"("\x")"),
                       "json: expected an escape character (one of \" \\ / b f n r t u) at byte 2, got 'x'",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(R"("\u12G4")"), "json: expected a hex digit at byte 5, got 'G'", std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(R"("\u12)"), "json: expected a hex digit at byte 5, got end of input",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(R"("\uD83D")"),
                       "json: expected '\\u' and a low surrogate after the high surrogate at byte 7, got '\"'",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json(R"("\uD83D\u0041")"),
                       "json: expected a low surrogate (DC00-DFFF) after the high surrogate at byte 9, got '0'",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(
      parse_json(R"("\uDE00")"),
      "json: expected a code unit that is not a low surrogate (DC00-DFFF) unless it follows a high one "
      "at byte 3, got 'D'",
      std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("\"a\xff\""), "json: expected a UTF-8 character at byte 2, got byte 0xff",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(parse_json("\"\xc0\xaf\""), "json: expected a UTF-8 character at byte 1, got byte 0xc0",
                       std::runtime_error);  // an overlong '/'
  CHECK_THROWS_WITH_AS(parse_json("\"\xed\xa0\x80\""), "json: expected a UTF-8 character at byte 1, got byte 0xed",
                       std::runtime_error);  // a surrogate encoded directly
  CHECK_THROWS_WITH_AS(parse_json("\"\xe4\xb8"), "json: expected a UTF-8 character at byte 1, got byte 0xe4",
                       std::runtime_error);  // cut off mid-character at the end of the input
}

TEST_CASE("json nesting is limited, so hostile input cannot exhaust the stack") {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK(parse_json(nested(io::kMaxJsonDepth)).is_array());
  CHECK_THROWS_WITH_AS(parse_json(nested(io::kMaxJsonDepth + 1)),
                       "json: expected at most 64 nested arrays and objects at byte 64, got more", std::runtime_error);
  CHECK_THROWS_AS(parse_json(std::string(1000000, '[')), std::runtime_error);
  std::string objects;
  for (int i = 0; i < 100; ++i) objects += "{\"k\":";
  CHECK_THROWS_AS(parse_json(objects), std::runtime_error);
}

TEST_CASE("json never reads past the end of its input") {
  // Every proper prefix of a valid document, copied into a heap block of exactly its size (so
  // `make sanitize` catches a read past it), must fail cleanly.
  const std::string doc = R"({"k": ["\u00e9\uD83D\uDE00", -1.5e+3, true, null, {"x": "y"}]})";
  for (size_t n = 0; n < doc.size(); ++n) {
    const std::unique_ptr<char[]> block(new char[n]);
    std::copy(doc.begin(), doc.begin() + static_cast<std::ptrdiff_t>(n), block.get());
    CHECK_THROWS_AS(parse_json(std::string_view(block.get(), n)), std::runtime_error);
  }
  CHECK(parse_json(doc).is_object());
}

TEST_CASE("json typed access names the types") {
  const Json v = parse_json(R"({"a": [1]})");
  CHECK_THROWS_WITH_AS(v.as_string(), "json: expected a string, got object", std::runtime_error);
  CHECK_THROWS_WITH_AS(v.find("a")->as_object(), "json: expected an object, got array", std::runtime_error);
  CHECK_THROWS_WITH_AS(Json(1.5).as_int64(), "json: expected an integer, got 1.5", std::runtime_error);
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS((void)Json(inf), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)Json(Json::Object{{"a", Json(1)}, {"a", Json(2)}}), "json: duplicate key \"a\"",
                       std::invalid_argument);
}
