// viz/progress.cpp - the progress bar: when to print, and what one line says.
#include "viz/progress.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

#include "tensor/check.h"

namespace seqgrad::viz {
namespace {

// printf-style formatting into a std::string, for the few fixed-width numbers below.
template <class... Args>
std::string format(const char* fmt, Args... args) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Is `out` one of the standard streams, and is that file a terminal? Any other stream (a file,
// a std::ostringstream) is not. TERM=dumb (editors' shell buffers) does not understand '\r'.
bool is_terminal(const std::ostream& out) {
  int fd = -1;
  if (&out == &std::cout) fd = fileno(stdout);
  if (&out == &std::cerr || &out == &std::clog) fd = fileno(stderr);
  if (fd < 0) return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
#ifdef _WIN32
  return _isatty(fd) != 0;
#else
  return isatty(fd) != 0;
#endif
}

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Log mode prints when the step reaches the next tenth of the total: the smallest
// ceil(k * total / 10) above `step`, for k = 1..10.
int64_t next_tenth(int64_t step, int64_t total) {
  const int64_t k = step * 10 / total + 1;
  return (k * total + 9) / 10;
}

}  // namespace

// ================================================================================================
// Formatting helpers

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const int64_t s = static_cast<int64_t>(std::floor(seconds));
  const int64_t h = s / 3600, m = s % 3600 / 60, sec = s % 60;
  if (h > 0) return format("%lld:%02lld:%02lld", static_cast<long long>(h), static_cast<long long>(m),
                           static_cast<long long>(sec));
  return format("%02lld:%02lld", static_cast<long long>(m), static_cast<long long>(sec));
}

std::string format_count(double value) {
  if (!std::isfinite(value) || value < 0) return "--";
  static const char* const units[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (value >= 1000 && u < 4) {
    value /= 1000;
    ++u;
  }
  if (u == 0) return value >= 100 ? format("%.0f", value) : format("%.3g", value);
  const char* fmt = value < 10 ? "%.2f%s" : value < 100 ? "%.1f%s" : "%.0f%s";
  return format(fmt, value, units[u]);
}

double eta_seconds(double elapsed, int64_t done, int64_t total) {
  if (done <= 0) return -1;
  return elapsed / static_cast<double>(done) * static_cast<double>(total - done);
}

// ================================================================================================
// ProgressBar

ProgressBar::ProgressBar(int64_t total, std::string label, std::ostream& out, ProgressOptions options)
    : total_(total), label_(std::move(label)), out_(out), options_(std::move(options)) {
  check(total >= 1, "ProgressBar: expected total steps >= 1, got ", total);
  check(options_.bar_width >= 0, "ProgressBar: expected bar_width >= 0, got ", options_.bar_width);
  if (!options_.clock) options_.clock = steady_seconds;
  terminal_ = options_.mode == ProgressMode::Terminal ||
              (options_.mode == ProgressMode::Auto && is_terminal(out_));
  start_ = now();
  last_draw_ = start_;
  next_log_step_ = 0;
}

ProgressBar::~ProgressBar() {
  if (updated_ && !finished_) finish();
}

double ProgressBar::now() const { return options_.clock(); }

double ProgressBar::elapsed() const { return now() - start_; }

void ProgressBar::update(int64_t step, const ProgressValues& values, int64_t tokens) {
  check(step >= 0 && step <= total_, "ProgressBar::update: expected step in [0, ", total_, "], got ", step);
  check(tokens >= 0, "ProgressBar::update: expected tokens >= 0, got ", tokens);
  const double t = now();
  const bool first = !updated_;
  step_ = step;
  values_ = values;
  tokens_ += tokens;
  updated_ = true;
  drawn_current_ = false;
  if (finished_) return;  // updates after finish() change line() but print nothing

  if (terminal_) {
    // Redraw at most every redraw_interval seconds, but never miss the first and last step.
    if (first || step == total_ || t - last_draw_ >= options_.redraw_interval) draw(t);
  } else {
    // A line at the first update, at every tenth of the way, and after log_interval seconds.
    if (first || step >= next_log_step_ || t - last_draw_ >= options_.log_interval) draw(t);
  }
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (terminal_) {
    draw(now());  // the final elapsed time, even if the last update was drawn already
    out_ << '\n' << std::flush;
  } else if (!drawn_current_) {
    draw(now());
  }
}

void ProgressBar::print(const std::string& text) {
  if (terminal_ && last_width_ > 0 && !finished_) {
    out_ << '\r' << std::string(last_width_, ' ') << '\r' << text << '\n';
    last_width_ = 0;
    draw(now());
  } else {
    out_ << text << '\n' << std::flush;
  }
}

void ProgressBar::draw(double t) {
  const std::string s = line_at(t);
  if (terminal_) {
    // '\r' returns to the start of the line; spaces blank what a longer previous line left.
    out_ << '\r' << s;
    if (s.size() < last_width_) out_ << std::string(last_width_ - s.size(), ' ');
    last_width_ = s.size();
    out_ << std::flush;
  } else {
    out_ << s << '\n' << std::flush;
    next_log_step_ = next_tenth(step_, total_);
  }
  last_draw_ = t;
  drawn_current_ = true;
}

// ================================================================================================
// One line of text

std::string ProgressBar::line() const { return line_at(now()); }

std::string ProgressBar::line_at(double t) const {
  const double elapsed = t - start_;
  std::string s;
  if (!label_.empty()) s += label_ + "  ";

  // " 37/100": the step padded to the width of the total, so the columns stay put.
  const std::string total = std::to_string(total_);
  std::string step = std::to_string(step_);
  s += std::string(total.size() - std::min(total.size(), step.size()), ' ') + step + "/" + total;

  const double fraction = static_cast<double>(step_) / static_cast<double>(total_);
  if (terminal_ && options_.bar_width > 0) {
    const int filled = static_cast<int>(fraction * options_.bar_width);
    s += " [" + std::string(filled, '#') + std::string(options_.bar_width - filled, ' ') + "]";
  }
  s += format(" %3d%%", static_cast<int>(fraction * 100));

  for (const auto& [name, value] : values_) s += " | " + name + " " + format("%.4g", value);
  if (tokens_ > 0) {
    const double rate = elapsed > 0 ? static_cast<double>(tokens_) / elapsed : -1;
    s += " | " + format_count(rate) + " tok/s";
  }
  s += " | " + format_duration(elapsed) + " elapsed, " +
       format_duration(eta_seconds(elapsed, step_, total_)) + " left";
  return s;
}

}  // namespace seqgrad::viz
