// viz/progress.h - a progress bar for training loops: steps, named values, tokens/s, time left.
//
// On a terminal it redraws one line in place ('\r', at most ~10 times a second); when the
// output is a file or a pipe it prints plain lines now and then (every 10% of the steps and at
// least every 30 s) so logs stay readable. Rates and the time left are averages since the bar
// was made: simple to reason about, slow to react to a sudden change of speed.
// It does not read the keyboard, use colours or know about models: it formats numbers.
// Read next: viz/svg.h (SVG plots of the same numbers, saved to a file).
#pragma once

#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace seqgrad::viz {

// ================================================================================================
// Formatting helpers (public so tests and examples can use them)

// Seconds as "mm:ss", or "h:mm:ss" from one hour on: 75 -> "01:15", 3725 -> "1:02:05".
// Negative or non-finite values (an unknown time) give "--:--".
std::string format_duration(double seconds);

// A rate or count in at most 4 significant characters: 950 -> "950", 12345 -> "12.3k",
// 2.5e6 -> "2.50M".
std::string format_count(double value);

// Time left if the remaining steps go as fast as the finished ones:
//   eta = elapsed / done * (total - done)
// Negative (unknown) while no step is done.
double eta_seconds(double elapsed, int64_t done, int64_t total);

// ================================================================================================
// ProgressBar

enum class ProgressMode {
  Auto,      // Terminal if the stream is std::cout/cerr/clog and that file is a terminal, else Log
  Terminal,  // one line redrawn in place with '\r'
  Log,       // whole lines, printed every 10% of the steps and every log_interval seconds
};

struct ProgressOptions {
  ProgressMode mode = ProgressMode::Auto;
  double redraw_interval = 0.1;  // seconds between terminal redraws
  double log_interval = 30.0;    // at most this many seconds between lines in Log mode
  int bar_width = 20;            // cells of the [####    ] bar (Terminal mode only)
  // Seconds on any fixed origin; tests inject a fake clock. Empty: std::chrono::steady_clock.
  std::function<double()> clock;

  ProgressOptions& with_mode(ProgressMode v) { mode = v; return *this; }
};

// Named values shown after the counts, in the order given: {{"loss", 0.42}, {"acc", 0.9}}.
using ProgressValues = std::vector<std::pair<std::string, double>>;

// Usage:
//   viz::ProgressBar bar(steps, /*label=*/"train");
//   for (int64_t step = 1; step <= steps; ++step) {
//     ... one optimisation step ...
//     bar.update(step, {{"loss", loss}}, /*tokens=*/batch_tokens);
//   }
//   bar.finish();
// A line reads
//   train  37/100 [#######             ]  37% | loss 0.42 | 12.3k tok/s | 00:12 elapsed, 00:20 left
// (Log mode leaves out the [###] bar).
class ProgressBar {
 public:
  ProgressBar(int64_t total, std::string label = "", std::ostream& out = std::cout,
              ProgressOptions options = {});
  // A bar that was updated but not finished finishes here, so the terminal is not left
  // mid-line when training stops with an exception.
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `step` is the number of steps done so far, 0..total. `tokens` are the tokens processed
  // since the previous update; they add up to the tokens/s rate (shown once any are given).
  // Throws std::invalid_argument for a step outside [0, total].
  void update(int64_t step, const ProgressValues& values = {}, int64_t tokens = 0);

  // Prints the final line (if not printed already) and ends it with a newline. Idempotent.
  void finish();

  // Prints `text` and a newline without garbling the bar: on a terminal the bar's line is
  // blanked, `text` printed, and the bar redrawn below it. Use it for per-epoch summaries.
  void print(const std::string& text);

  // The line as it would be printed now (without '\r' or '\n'); what tests pin.
  std::string line() const;

  bool terminal() const { return terminal_; }
  double elapsed() const;  // seconds since the bar was made

 private:
  double now() const;
  std::string line_at(double t) const;
  void draw(double t);

  int64_t total_;
  std::string label_;
  std::ostream& out_;
  ProgressOptions options_;
  bool terminal_;

  double start_;                 // clock at construction
  int64_t step_ = 0;             // last step given to update()
  ProgressValues values_;        // last values given to update()
  int64_t tokens_ = 0;           // tokens so far
  bool updated_ = false;         // update() was called at least once
  bool finished_ = false;
  bool drawn_current_ = false;   // the current state is on screen / in the log
  double last_draw_ = 0;         // clock at the last line drawn
  int64_t next_log_step_ = 0;    // Log mode: print when step reaches this (the next 10%)
  size_t last_width_ = 0;        // Terminal mode: length of the line on screen, to blank its tail
};

}  // namespace seqgrad::viz
