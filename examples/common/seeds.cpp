// examples/common/seeds.cpp - the title over seeds, two jobs at a time, and the table.
#include "examples/common/seeds.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "data/metrics.h"
#include "tensor/check.h"

namespace seqgrad::examples {

std::string over_seeds(const std::vector<int64_t>& seeds) {
  if (seeds.size() < 2) return "";
  std::string list;
  for (int64_t s : seeds) list += (list.empty() ? "" : ", ") + std::to_string(s);
  return ": mean (min-max) over n = " + std::to_string(seeds.size()) + " seeds (" + list + ")";
}

void print_progress(std::mutex& print, int64_t seed, int64_t step, int64_t steps, double loss) {
  if (step != 1 && step % std::max<int64_t>(1, steps / 10) != 0) return;
  std::ostringstream line;
  line << "  seed " << std::left << std::setw(4) << seed << std::right << " step " << std::setw(5) << step << "/"
       << steps << "  loss " << std::fixed << std::setprecision(4) << loss << "\n";
  std::lock_guard<std::mutex> lock(print);
  std::cout << line.str() << std::flush;
}

void two_at_a_time(size_t n, const std::function<void(size_t)>& job) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) job(i);
  };
  std::vector<std::thread> workers;
  const unsigned cores = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  for (unsigned w = 0; w < cores; ++w) workers.emplace_back(worker);
  for (std::thread& w : workers) w.join();
}

// ===============================================================================================
// SeedTable

SeedTable::SeedTable(std::string row_header, std::vector<Column> columns)
    : row_header_(std::move(row_header)), columns_(std::move(columns)) {
  for (const Column& c : columns_)
    check(c.decimals >= 0 && c.decimals <= 9, "SeedTable: column '", c.name, "' expects 0 to 9 decimals, got ", c.decimals);
}

size_t SeedTable::row_index(const std::string& row) const {
  const auto it = std::find(rows_.begin(), rows_.end(), row);
  check(it != rows_.end(), "SeedTable: no row '", row, "'");
  return static_cast<size_t>(it - rows_.begin());
}

void SeedTable::add(const std::string& row, const std::vector<double>& figures) {
  check(figures.size() == columns_.size(), "SeedTable: row '", row, "' expected ", columns_.size(), " figures, got ",
        figures.size());
  if (std::find(rows_.begin(), rows_.end(), row) == rows_.end()) {
    rows_.push_back(row);
    runs_.emplace_back(columns_.size());
  }
  std::vector<std::vector<double>>& cells = runs_[row_index(row)];
  for (size_t k = 0; k < columns_.size() && !cells[k].empty(); ++k) {  // all checked before any is added
    const double x = figures[k], first = cells[k][0];
    check(std::isnan(x) == std::isnan(first), "SeedTable: row '", row, "' has '", columns_[k].name,
          "' in one run and not in another");
    check(columns_[k].kind == Kind::Figure || std::isnan(x) || x == first, "SeedTable: '", columns_[k].name,
          "' of row '", row, "' is the same in every run; expected ", first, ", got ", x);
  }
  for (size_t k = 0; k < columns_.size(); ++k) cells[k].push_back(figures[k]);
}

const std::vector<double>& SeedTable::runs(const std::string& row, const std::string& column) const {
  for (size_t k = 0; k < columns_.size(); ++k)
    if (columns_[k].name == column) return runs_[row_index(row)][k];
  check(false, "SeedTable: no column '", column, "'");
  return runs_[0][0];
}

std::string SeedTable::cell(size_t row, size_t column) const {
  const std::vector<double>& x = runs_[row][column];
  if (std::isnan(x[0])) return "-";
  const Column& c = columns_[column];
  if (c.kind == Kind::Fixed) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(c.decimals) << x[0];
    return out.str();
  }
  return data::mean_range(x, c.decimals);
}

std::string SeedTable::to_string() const {
  // Every column as wide as its widest cell or header, plus two spaces between columns.
  size_t first = row_header_.size();
  for (const std::string& r : rows_) first = std::max(first, r.size());
  std::vector<size_t> width(columns_.size());
  for (size_t k = 0; k < columns_.size(); ++k) {
    width[k] = columns_[k].name.size();
    for (size_t r = 0; r < rows_.size(); ++r) width[k] = std::max(width[k], cell(r, k).size());
  }
  std::ostringstream out;
  out << std::left << std::setw(static_cast<int>(first)) << row_header_ << std::right;
  for (size_t k = 0; k < columns_.size(); ++k) out << std::setw(static_cast<int>(width[k] + 2)) << columns_[k].name;
  out << "\n";
  for (size_t r = 0; r < rows_.size(); ++r) {
    out << std::left << std::setw(static_cast<int>(first)) << rows_[r] << std::right;
    for (size_t k = 0; k < columns_.size(); ++k) out << std::setw(static_cast<int>(width[k] + 2)) << cell(r, k);
    out << "\n";
  }
  return out.str();
}

}  // namespace seqgrad::examples
