// tests/viz/test_progress.cpp - the progress bar with a fake clock: number formatting, the ETA,
// pinned output in Terminal mode (redraws, throttling, blanking) and Log mode (every tenth,
// every log_interval seconds), finish/destructor behaviour and the pinned errors.
#include <cmath>
#include <sstream>
#include <vector>

#include "tests/test_util.h"
#include "viz/progress.h"

using namespace seqgrad;
using namespace seqgrad::viz;

namespace {

// Options whose clock reads the variable `t` (seconds), so tests decide what time it is.
ProgressOptions fake_clock(const double& t, ProgressMode mode) {
  ProgressOptions o;
  o.mode = mode;
  o.clock = [&t] { return t; };
  return o;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

// ================================================================================================
// Formatting helpers

TEST_CASE("format_duration: mm:ss, h:mm:ss from an hour, --:-- when unknown") {
  CHECK(format_duration(0) == "00:00");
  CHECK(format_duration(59.9) == "00:59");
  CHECK(format_duration(75) == "01:15");
  CHECK(format_duration(3599) == "59:59");
  CHECK(format_duration(3725) == "1:02:05");
  CHECK(format_duration(36000) == "10:00:00");
  CHECK(format_duration(-1) == "--:--");
  CHECK(format_duration(std::nan("")) == "--:--");
}

TEST_CASE("format_count keeps about three significant digits with k/M/G suffixes") {
  CHECK(format_count(0) == "0");
  CHECK(format_count(3.4) == "3.4");
  CHECK(format_count(42.25) == "42.2");
  CHECK(format_count(950) == "950");
  CHECK(format_count(1234) == "1.23k");
  CHECK(format_count(12345) == "12.3k");
  CHECK(format_count(123456) == "123k");
  CHECK(format_count(2.5e6) == "2.50M");
  CHECK(format_count(1.5e9) == "1.50G");
  CHECK(format_count(-1) == "--");
}

TEST_CASE("eta_seconds: the remaining steps at the average speed so far") {
  CHECK(eta_seconds(10, 25, 100) == doctest::Approx(30));  // 0.4 s/step * 75 steps
  CHECK(eta_seconds(62, 3, 4) == doctest::Approx(62.0 / 3));
  CHECK(eta_seconds(10, 100, 100) == 0);
  CHECK(eta_seconds(10, 0, 100) < 0);  // unknown before the first step
}

// ================================================================================================
// Terminal mode

TEST_CASE("Terminal mode redraws one line with \\r, at most every 0.1 s, blanking leftovers") {
  std::ostringstream out;
  double t = 0;
  ProgressOptions o = fake_clock(t, ProgressMode::Terminal);
  o.bar_width = 8;
  ProgressBar bar(4, /*label=*/"", out, o);
  CHECK(bar.terminal());
  t = 61;
  bar.update(1, {{"loss", 10.5}}, /*tokens=*/6100);  // the first update is always drawn
  t = 61.05;
  bar.update(2, {{"loss", 1.25}}, 6100);  // 0.05 s after the last draw: skipped
  t = 62;
  bar.update(3, {{"loss", 1}}, 6100);  // drawn; 3 characters shorter than the line on screen
  t = 62.01;
  bar.update(4, {{"loss", 0.5}}, 6100);  // the last step is always drawn
  t = 63;
  bar.finish();
  CHECK(out.str() ==
        "\r1/4 [##      ]  25% | loss 10.5 | 100 tok/s | 01:01 elapsed, 03:03 left"
        "\r3/4 [######  ]  75% | loss 1 | 295 tok/s | 01:02 elapsed, 00:20 left   "
        "\r4/4 [########] 100% | loss 0.5 | 393 tok/s | 01:02 elapsed, 00:00 left"
        "\r4/4 [########] 100% | loss 0.5 | 387 tok/s | 01:03 elapsed, 00:00 left\n");
}

TEST_CASE("finish is idempotent and the destructor finishes an unfinished bar") {
  std::ostringstream out;
  double t = 0;
  {
    ProgressBar bar(10, "eval", out, fake_clock(t, ProgressMode::Terminal));
    t = 1;
    bar.update(5);
  }  // no finish(): the destructor ends the line
  CHECK(out.str() ==
        "\reval   5/10 [##########          ]  50% | 00:01 elapsed, 00:01 left"
        "\reval   5/10 [##########          ]  50% | 00:01 elapsed, 00:01 left\n");

  std::ostringstream out2;
  ProgressBar bar(3, "x", out2, fake_clock(t, ProgressMode::Terminal));
  bar.update(3);
  bar.finish();
  bar.finish();
  bar.update(2);  // after finish: remembered, not printed
  CHECK(lines_of(out2.str()).size() == 1);
  CHECK(out2.str().back() == '\n');
  CHECK(bar.line().rfind("x  2/3", 0) == 0);
}

TEST_CASE("print puts a line above the bar without garbling it") {
  std::ostringstream out;
  double t = 0;
  ProgressOptions o = fake_clock(t, ProgressMode::Terminal);
  o.bar_width = 4;
  ProgressBar bar(2, "", out, o);
  bar.update(1);
  bar.print("epoch 1: valid loss 0.5");
  const std::string line = "1/2 [##  ]  50% | 00:00 elapsed, 00:00 left";
  CHECK(out.str() == "\r" + line + "\r" + std::string(line.size(), ' ') + "\repoch 1: valid loss 0.5\n\r" + line);

  std::ostringstream log;
  ProgressBar plain(2, "", log, fake_clock(t, ProgressMode::Log));
  plain.update(1);
  plain.print("note");
  CHECK(log.str() == "1/2  50% | 00:00 elapsed, 00:00 left\nnote\n");
}

// ================================================================================================
// Log mode

TEST_CASE("Log mode prints whole lines at the first step and every tenth of the way") {
  std::ostringstream out;
  double t = 0;
  ProgressBar bar(100, "train", out, fake_clock(t, ProgressMode::Log));
  CHECK_FALSE(bar.terminal());
  for (int64_t step = 1; step <= 100; ++step) {
    t = 0.5 * static_cast<double>(step);
    bar.update(step, {{"loss", 1.0 / static_cast<double>(step)}, {"acc", 0.5}}, /*tokens=*/200);
  }
  bar.finish();  // step 100 is printed already: nothing more
  const std::vector<std::string> lines = lines_of(out.str());
  REQUIRE(lines.size() == 11);
  CHECK(lines[0] == "train    1/100   1% | loss 1 | acc 0.5 | 400 tok/s | 00:00 elapsed, 00:49 left");
  CHECK(lines[1] == "train   10/100  10% | loss 0.1 | acc 0.5 | 400 tok/s | 00:05 elapsed, 00:45 left");
  CHECK(lines[5] == "train   50/100  50% | loss 0.02 | acc 0.5 | 400 tok/s | 00:25 elapsed, 00:25 left");
  CHECK(lines[10] == "train  100/100 100% | loss 0.01 | acc 0.5 | 400 tok/s | 00:50 elapsed, 00:00 left");
  CHECK(out.str().find('\r') == std::string::npos);
}

TEST_CASE("Log mode also prints after log_interval seconds, and finish prints the last state") {
  std::ostringstream out;
  double t = 0;
  ProgressBar bar(1000, "", out, fake_clock(t, ProgressMode::Log));  // log_interval = 30 s
  for (int64_t step = 1; step <= 8; ++step) {
    t = 10.0 * static_cast<double>(step);
    bar.update(step);
  }
  bar.finish();
  const std::vector<std::string> lines = lines_of(out.str());
  REQUIRE(lines.size() == 4);  // steps 1, 4, 7 (30 s apart) and 8 from finish()
  CHECK(lines[0] == "   1/1000   0% | 00:10 elapsed, 2:46:30 left");
  CHECK(lines[1].rfind("   4/1000", 0) == 0);
  CHECK(lines[2].rfind("   7/1000", 0) == 0);
  CHECK(lines[3] == "   8/1000   0% | 01:20 elapsed, 2:45:20 left");
}

TEST_CASE("Auto mode writes plain lines to a stream that is not a terminal") {
  std::ostringstream out;
  ProgressBar bar(2, "auto", out);
  CHECK_FALSE(bar.terminal());
  bar.update(1);
  bar.update(2);
  bar.finish();
  CHECK(lines_of(out.str()).size() == 2);
  CHECK(out.str().find('\r') == std::string::npos);
}

// ================================================================================================
// Errors

TEST_CASE("ProgressBar errors are pinned") {
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(ProgressBar(0, "", out), "ProgressBar: expected total steps >= 1, got 0",
                       std::invalid_argument);
  ProgressBar bar(10, "", out);
  CHECK_THROWS_WITH_AS(bar.update(11), "ProgressBar::update: expected step in [0, 10], got 11",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(bar.update(-1), "ProgressBar::update: expected step in [0, 10], got -1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(bar.update(1, {}, -5), "ProgressBar::update: expected tokens >= 0, got -5",
                       std::invalid_argument);
}
