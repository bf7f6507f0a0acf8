// examples/common/args.cpp - parsing, help text and checked conversions.
#include "examples/common/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "data/metrics.h"
#include "tensor/check.h"

namespace seqgrad::cli {

Args::Args(std::string program, std::string usage, std::vector<FlagSpec> flags)
    : program_(std::move(program)), usage_(std::move(usage)), flags_(std::move(flags)) {}

Args::Args(std::string program, std::string usage, std::vector<FlagSpec> flags, int argc, char** argv)
    : Args(std::move(program), std::move(usage), std::move(flags)) {
  parse(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
  if (help_requested()) {
    std::cout << help();
    std::exit(0);
  }
  // An example takes flags only: a stray word is a mistake (a list written with spaces, say).
  check(positional_.empty(), program_, ": unexpected argument '", positional_.empty() ? "" : positional_[0], "' (see '",
        program_, " --help')");
}

const FlagSpec* Args::find(const std::string& name) const {
  for (const FlagSpec& f : flags_)
    if (f.name == name) return &f;
  return nullptr;
}

// "; did you mean '--epochs'?" for a name one or two typing mistakes (data::edit_distance over
// characters) from exactly one flag, or the start of exactly one flag; "" otherwise.
std::string Args::did_you_mean(const std::string& name) const {
  const auto letters = [](const std::string& word) {
    data::Tokens out;
    for (const char c : word) out.emplace_back(1, c);
    return out;
  };
  std::vector<std::string> near, extended;
  for (const FlagSpec& f : flags_) {
    const int64_t distance = data::edit_distance(letters(name), letters(f.name));
    if (distance <= (name.size() <= 4 ? 1 : 2)) near.push_back(f.name);
    if (name.size() >= 3 && f.name.compare(0, name.size(), name) == 0) extended.push_back(f.name);
  }
  if (near.size() == 1) return "; did you mean '--" + near[0] + "'?";
  if (near.empty() && extended.size() == 1) return "; did you mean '--" + extended[0] + "'?";
  return "";
}

const FlagSpec& Args::spec(const std::string& name) const {
  if (const FlagSpec* f = find(name)) return *f;
  throw std::invalid_argument(cat(program_, ": unknown flag '--", name, "'", did_you_mean(name), " (see '", program_, " --help')"));
}

void Args::parse(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--help" || w == "-h") {
      help_ = true;
      continue;
    }
    if (w.size() < 3 || w.compare(0, 2, "--") != 0) {
      check(w.empty() || w[0] != '-' || w == "-", program_, ": unknown flag '", w, "' (see '", program_,
            " --help')");
      positional_.push_back(w);
      continue;
    }
    std::string name = w.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec& f = spec(name);
    if (f.is_switch) {
      check(!inline_value, program_, ": --", name, " is a switch and takes no value");
      value = "true";
    } else if (!inline_value) {
      // The next word is the value, unless it is one of the flags ("--decoder --out m" forgot
      // the decoder's value; it did not name a decoder "--out").
      const bool next_is_flag = i + 1 < words.size() && words[i + 1].compare(0, 2, "--") == 0 &&
                                (words[i + 1] == "--help" || find(words[i + 1].substr(2, words[i + 1].find('=') - 2)) != nullptr);
      check(i + 1 < words.size() && !next_is_flag, program_, ": --", name, " needs a value");
      value = words[++i];
    }
    for (const auto& [given_name, v] : values_)
      check(given_name != name, program_, ": --", name, " is given twice");
    values_.emplace_back(name, value);
  }
}

std::string Args::help() const {
  std::ostringstream os;
  os << "usage: " << usage_ << "\n\nflags:\n";
  for (const FlagSpec& f : flags_) {
    std::string left = "  --" + f.name + (f.is_switch ? "" : " VALUE");
    os << left << std::string(left.size() < 24 ? 24 - left.size() : 1, ' ') << f.help;
    if (!f.is_switch && !f.default_value.empty()) os << " (default " << f.default_value << ")";
    os << "\n";
  }
  os << "  --help                print this help\n";
  return os.str();
}

bool Args::given(const std::string& name) const {
  spec(name);
  for (const auto& [n, v] : values_)
    if (n == name) return true;
  return false;
}

std::string Args::text(const std::string& name) const {
  const FlagSpec& f = spec(name);
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  return f.default_value;
}

int64_t Args::integer(const std::string& name, int64_t lo, int64_t hi) const {
  const std::string v = text(name);
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  check(!v.empty() && *end == '\0' && errno == 0 && n >= lo && n <= hi, program_, ": --", name,
        " expects a whole number from ", lo, " to ", hi, ", got '", v, "'");
  return n;
}

std::vector<int64_t> Args::integers(const std::string& name, int64_t lo, int64_t hi) const {
  const std::string v = text(name);
  std::vector<int64_t> out;
  size_t start = 0;
  while (true) {  // one item per comma, so "1,,2" and "1," have an empty item
    const size_t comma = v.find(',', start);
    const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(item.c_str(), &end, 10);
    check(!item.empty() && *end == '\0' && errno == 0 && n >= lo && n <= hi, program_, ": --", name,
          " expects comma-separated whole numbers from ", lo, " to ", hi, ", got '", v, "'");
    // The same number twice would count one run twice: a list of runs has no repeats.
    check(std::find(out.begin(), out.end(), n) == out.end(), program_, ": --", name, " lists ", n, " twice, in '", v,
          "'");
    out.push_back(n);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

double Args::number(const std::string& name, double lo, double hi) const {
  const std::string v = text(name);
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  check(!v.empty() && *end == '\0' && errno == 0 && std::isfinite(x) && x >= lo && x <= hi, program_, ": --",
        name, " expects a number from ", lo, " to ", hi, ", got '", v, "'");
  return x;
}

bool Args::on(const std::string& name) const { return text(name) == "true"; }

std::string Args::choice(const std::string& name, const std::vector<std::string>& choices) const {
  const std::string v = text(name);
  std::string list;
  for (const std::string& c : choices) {
    if (c == v) return v;
    list += (list.empty() ? "" : ", ") + c;
  }
  check(false, program_, ": --", name, " expects one of ", list, ", got '", v, "'");
  return v;
}

// The comma-separated items of --name's value as written, empty ones included.
std::vector<std::string> Args::split_list(const std::string& name) const {
  const std::string v = text(name);
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = v.find(',', start);
    items.push_back(v.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// Each of `items` once only ("--models lists dot twice, in 'dot,general,dot'").
void Args::check_distinct(const std::string& name, const std::vector<std::string>& items) const {
  for (size_t i = 0; i < items.size(); ++i)
    check(std::find(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(i), items[i]) == items.begin() + static_cast<std::ptrdiff_t>(i),
          program_, ": --", name, " lists ", items[i], " twice, in '", text(name), "'");
}

std::vector<std::string> Args::choice_list(const std::string& name, const std::vector<std::string>& choices) const {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  const std::vector<std::string> out = split_list(name);
  for (const std::string& item : out)
    check(std::find(choices.begin(), choices.end(), item) != choices.end(), program_, ": --", name,
          " expects a comma-separated list of ", list, ", got '", text(name), "'");
  check_distinct(name, out);
  return out;
}

std::vector<std::string> Args::items(const std::string& name) const {
  const std::vector<std::string> out = split_list(name);
  for (const std::string& item : out)
    check(!item.empty(), program_, ": --", name, " expects a comma-separated list of names, got '", text(name), "'");
  check_distinct(name, out);
  return out;
}

}  // namespace seqgrad::cli
