// io/registry.cpp - options, their values, and the name lists of registry.h.
#include "io/registry.h"

#include <cmath>

namespace seqgrad {

std::vector<std::string>& registration_problems() {
  static std::vector<std::string> problems;  // (a function's static: ready whichever file registers first)
  return problems;
}

const char* article(const std::string& noun) {
  return !noun.empty() && std::string("aeiou").find(noun[0]) != std::string::npos ? "an" : "a";
}

std::string join_names(const std::vector<std::string>& names, const char* last) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return out;
}

// ================================================================================================
// Option

std::string Option::flag_name() const {
  if (!flag.empty()) return flag;
  std::string f = key;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

io::Json Option::default_json() const {
  switch (type) {
    case Type::Integer: return io::Json(static_cast<int64_t>(std::stoll(default_value)));
    case Type::Number: return io::Json(std::stod(default_value));
    case Type::Switch: return io::Json(default_value == "true");
    case Type::Choice: return io::Json(default_value);
  }
  return io::Json();
}

bool Option::accepts(const io::Json& v, std::string& why) const {
  switch (type) {
    case Type::Integer:
      why = cat("a whole number from ", static_cast<int64_t>(lo), " to ", static_cast<int64_t>(hi));
      return v.is_integer() && static_cast<double>(v.as_int64()) >= lo && static_cast<double>(v.as_int64()) <= hi;
    case Type::Number:
      why = cat("a number from ", lo, " to ", hi);
      return v.is_number() && v.as_double() >= lo && v.as_double() <= hi;
    case Type::Switch:
      why = "true or false";
      return v.is_bool();
    case Type::Choice: {
      const std::vector<std::string> names = choices();
      why = cat("one of ", join_names(names, ", "));
      return v.is_string() && std::find(names.begin(), names.end(), v.as_string()) != names.end();
    }
  }
  return false;
}

Option integer_option(std::string key, int64_t default_value, int64_t lo, int64_t hi, std::string help) {
  Option o;
  o.key = std::move(key);
  o.type = Option::Type::Integer;
  o.default_value = std::to_string(default_value);
  o.lo = static_cast<double>(lo);
  o.hi = static_cast<double>(hi);
  o.help = std::move(help);
  return o;
}

Option number_option(std::string key, double default_value, double lo, double hi, std::string help) {
  Option o;
  o.key = std::move(key);
  o.type = Option::Type::Number;
  o.default_value = cat(default_value);
  o.lo = lo;
  o.hi = hi;
  o.help = std::move(help);
  return o;
}

Option switch_option(std::string key, bool default_value, std::string help) {
  Option o;
  o.key = std::move(key);
  o.type = Option::Type::Switch;
  o.default_value = default_value ? "true" : "false";
  o.help = std::move(help);
  return o;
}

Option choice_option(std::string key, std::string default_value, std::function<std::vector<std::string>()> choices,
                     std::string help) {
  Option o;
  o.key = std::move(key);
  o.type = Option::Type::Choice;
  o.default_value = std::move(default_value);
  o.choices = std::move(choices);
  o.help = std::move(help);
  return o;
}

Option in_every_checkpoint(Option o) {
  o.in_every_checkpoint = true;
  return o;
}

// ================================================================================================
// Settings

Settings::Settings(io::Json values) : values_(std::move(values)) {
  check(values_.is_object(), "Settings: expected a JSON object of option values, got ", values_.dump());
}

Settings& Settings::set(const std::string& key, io::Json value) {
  values_.set(key, std::move(value));
  return *this;
}

const io::Json& Settings::get(const std::string& key) const {
  const io::Json* v = values_.find(key);
  check(v != nullptr, "Settings: no value for the option '", key, "'");
  return *v;
}

int64_t Settings::integer(const std::string& key) const {
  const io::Json& v = get(key);
  check(v.is_integer(), "Settings: the option '", key, "' must be a whole number, got ", v.dump());
  return v.as_int64();
}

double Settings::number(const std::string& key) const {
  const io::Json& v = get(key);
  check(v.is_number(), "Settings: the option '", key, "' must be a number, got ", v.dump());
  return v.as_double();
}

bool Settings::on(const std::string& key) const {
  const io::Json& v = get(key);
  check(v.is_bool(), "Settings: the option '", key, "' must be true or false, got ", v.dump());
  return v.as_bool();
}

std::string Settings::text(const std::string& key) const {
  const io::Json& v = get(key);
  check(v.is_string(), "Settings: the option '", key, "' must be a string, got ", v.dump());
  return v.as_string();
}

Settings with_defaults(const std::vector<Option>& options, Settings settings) {
  for (const Option& o : options)
    if (!settings.has(o.key)) settings.set(o.key, o.default_json());
  return settings;
}

Settings complete_settings(const std::vector<Option>& options, const Settings& given, const std::string& who) {
  Settings complete;
  for (const Option& o : options) {
    const io::Json v = given.has(o.key) ? *given.json().find(o.key) : o.default_json();
    std::string why;
    check(o.accepts(v, why), who, "'s ", o.key, " must be ", why, ", got ", v.dump());
    complete.set(o.key, v);
  }
  for (const auto& [key, value] : given.json().as_object())
    check(complete.has(key), who, " takes no option '", key, "'");
  return complete;
}

}  // namespace seqgrad
