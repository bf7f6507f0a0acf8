// examples/common/seeds.h - what an example that trains each model once per seed needs: a
// title that says the table is over seeds, the models trained two at a time, and the table of
// results, each cell one run's figure or, over several seeds, data::mean_range's "mean (min-max)".
//
// One run is a model's luck (a seed sets its initial weights): a difference between two rows
// smaller than their ranges is not a ranking. Examples 04-06 tabulate exact match per length
// (data::bucket_table_over_runs); 09, 12 and 13 a few figures per model. Read first: data/metrics.h.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace seqgrad::examples {

// The end of a table's title when it summarises several seeds: ": mean (min-max) over n = 3
// seeds (1, 2, 3)"; nothing for one seed, whose table shows that run's own figures.
std::string over_seeds(const std::vector<int64_t>& seeds);

// Runs job(0), ..., job(n - 1) on two threads (one if the machine has one core), each index
// once, each job on one thread: an example's small models keep a core busy on their own. The
// jobs must not share a model; printing is theirs to guard.
void two_at_a_time(size_t n, const std::function<void(size_t)>& job);

// One run's progress among runs trained two at a time: a line on the first step and every
// tenth of the way, "  seed 11   step   100/1000  loss 0.4321", under `print`, the lock of the
// output the runs share.
void print_progress(std::mutex& print, int64_t seed, int64_t step, int64_t steps, double loss);

// One row per model, one column per figure; add a row's figures once per run (seed):
//   SeedTable table("model", {{"parameters", 0, SeedTable::Kind::Fixed}, {"test loss", 3}, {"exact match", 3}});
//   table.add("gnmt-4", {56878, 0.036, 0.933});      // seed 1
//   table.add("gnmt-4", {56878, 0.041, 0.902});      // seed 2
//   std::cout << table.to_string();
//   model    parameters           test loss         exact match
//   gnmt-4        56878   0.039 (0.036-0.041)   0.918 (0.902-0.933)
// A Figure column shows mean_range over the runs (one run: its figure alone); a Fixed column is
// a property of the row, not of the run (a parameter count), the same in every run and shown
// once. kNone is a figure a row does not have (hop 2 of a one-hop model), shown as "-".
class SeedTable {
 public:
  enum class Kind { Figure, Fixed };
  struct Column {
    Column(std::string name, int decimals, Kind kind = Kind::Figure) : name(std::move(name)), decimals(decimals), kind(kind) {}
    std::string name;
    int decimals;
    Kind kind;
  };
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  SeedTable(std::string row_header, std::vector<Column> columns);
  // One run's figures of one row, one per column. Rows print in the order first added.
  void add(const std::string& row, const std::vector<double>& figures);
  // Every run's figure of one cell, in the order added.
  const std::vector<double>& runs(const std::string& row, const std::string& column) const;
  // The header and one line per row, columns right-aligned.
  std::string to_string() const;

 private:
  size_t row_index(const std::string& row) const;  // or an error naming the row
  std::string cell(size_t row, size_t column) const;
  std::string row_header_;
  std::vector<Column> columns_;
  std::vector<std::string> rows_;
  std::vector<std::vector<std::vector<double>>> runs_;  // [row][column] -> one figure per run
};

}  // namespace seqgrad::examples
