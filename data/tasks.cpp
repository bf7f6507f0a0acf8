// data/tasks.cpp - the toy task generators (see tasks.h).
#include "data/tasks.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "data/translation.h"
#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {

// ================================================================================================
// Dates

namespace {

const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};
const char* const kWeekdays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int days_in_month(int y, int m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : days[m - 1];
}
// 0 = Sunday (Sakamoto's method).
int weekday(int y, int m, int d) {
  static const int t[] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
  if (m < 3) y -= 1;
  return (y + y / 4 - y / 100 + y / 400 + t[m - 1] + d) % 7;
}

std::string printf_string(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* fmt, ...) {
  char buf[128];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

}  // namespace

int date_format_count() { return 8; }

std::string format_date(int y, int m, int d, int format) {
  const std::string month = kMonths[m - 1], mon = month.substr(0, 3);
  switch (format) {
    case 0: return printf_string("%d %s %d", d, mon.c_str(), y);                 // 22 Nov 2026
    case 1: return printf_string("%s %d, %d", mon.c_str(), d, y);                // Nov 22, 2026
    case 2: return printf_string("%s %d, %d", month.c_str(), d, y);              // November 22, 2026
    case 3: return printf_string("%d %s %d", d, month.c_str(), y);               // 22 November 2026
    case 4: return printf_string("%d/%02d/%02d", y, m, d);                       // 2026/11/22
    case 5: return printf_string("%02d/%02d/%d", m, d, y);                       // 11/22/2026
    case 6: return printf_string("%02d.%02d.%d", d, m, y);                       // 22.11.2026
    case 7: return printf_string("%s, %s %d, %d", kWeekdays[weekday(y, m, d)], month.c_str(), d, y);  // Sunday, ...
  }
  check(false, "format_date: expected a format from 0 to ", date_format_count() - 1, ", got ", format);
  return "";
}

// ================================================================================================
// Generators

std::vector<Pair> make_pairs(const std::string& task, const TaskOptions& o) {
  std::vector<Pair> pairs;
  for_each_pair(task, o, [&](const Pair& p) { pairs.push_back(p); });
  return pairs;
}

void for_each_pair(const std::string& task, const TaskOptions& o, const std::function<void(const Pair&)>& each) {
  const TaskEntry& entry = tasks().get(task);
  check(o.n >= 0, "make_pairs: expected n >= 0, got ", o.n);
  check(o.min_len >= 1 && o.min_len <= o.max_len, "make_pairs: expected 1 <= min_len <= max_len, got ", o.min_len,
        " and ", o.max_len);
  TaskOptions complete = o;
  complete.settings = complete_settings(entry.options, o.settings, "make_pairs: the task " + task);
  entry.generate(complete, each);
}

Registry<TaskEntry>& tasks() {
  static Registry<TaskEntry> registry("task");
  return registry;
}

Option symbols_option() {
  return integer_option("symbols", 10, 1, 26, "copy, reverse, sort: the alphabet's size (the letters a, b, c, ...)");
}

namespace {

// Draws dates and formats until the source length fits the range.
void generate_dates(const TaskOptions& o, const std::function<void(const Pair&)>& each) {
  Generator g(o.seed);
  for (int64_t i = 0; i < o.n; ++i)
    for (int attempt = 0;; ++attempt) {
      check(attempt < 1000, "make_pairs: no date format fits source lengths ", o.min_len, "..", o.max_len,
            " (dates are 10 to 29 characters long)");
      const int y = 1950 + static_cast<int>(g.randint(100)), m = 1 + static_cast<int>(g.randint(12));
      const int d = 1 + static_cast<int>(g.randint(days_in_month(y, m)));
      const std::string source = format_date(y, m, d, static_cast<int>(g.randint(date_format_count())));
      const int64_t len = static_cast<int64_t>(split_chars(source).size());
      if (len < o.min_len || len > o.max_len) continue;
      each({source, printf_string("%04d-%02d-%02d", y, m, d)});
      break;
    }
}

// copy, reverse and sort: a random string of letters, and the same letters as they are, reversed
// or sorted.
void generate_letters(const TaskOptions& o, const std::function<void(const Pair&)>& each,
                      const std::function<void(std::vector<std::string>&)>& transform) {
  const int64_t symbols = o.settings.integer("symbols");
  Generator g(o.seed);
  for (int64_t i = 0; i < o.n; ++i) {
    const int64_t len = o.min_len + static_cast<int64_t>(g.randint(o.max_len - o.min_len + 1));
    std::vector<std::string> tokens;
    for (int64_t k = 0; k < len; ++k) tokens.push_back(std::string(1, static_cast<char>('a' + g.randint(symbols))));
    std::vector<std::string> target = tokens;
    transform(target);
    each({join(tokens, " "), join(target, " ")});
  }
}

}  // namespace

SEQGRAD_REGISTER_TASK("copy", "the letters as they are", "space", 3, 10,
                      [](const TaskOptions& o, const std::function<void(const Pair&)>& each) {
                        generate_letters(o, each, [](std::vector<std::string>&) {});
                      },
                      {symbols_option()})
SEQGRAD_REGISTER_TASK("reverse", "the letters in reverse order", "space", 3, 10,
                      [](const TaskOptions& o, const std::function<void(const Pair&)>& each) {
                        generate_letters(o, each, [](std::vector<std::string>& t) { std::reverse(t.begin(), t.end()); });
                      },
                      {symbols_option()})
SEQGRAD_REGISTER_TASK("sort", "the letters sorted", "space", 3, 10,
                      [](const TaskOptions& o, const std::function<void(const Pair&)>& each) {
                        generate_letters(o, each, [](std::vector<std::string>& t) { std::sort(t.begin(), t.end()); });
                      },
                      {symbols_option()})
SEQGRAD_REGISTER_TASK("date", "a date in one of 8 formats to YYYY-MM-DD, character by character", "char", 1, 40,
                      generate_dates)

}  // namespace seqgrad::data
