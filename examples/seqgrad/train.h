// examples/seqgrad/train.h - `seqgrad train`, in four stages that read top to bottom in
// train.cpp: configuration (the flags, or a resume file's saved ones, checked with every file
// the run will write), data (the corpus, the vocabularies, the model), the training loop (steps,
// validation after each epoch, the best checkpoint, Ctrl-C/SIGTERM/SIGHUP and the resume file),
// and saving what is left (the loss plot). resume.h holds what --resume reads and writes.
#pragma once

#include <cstdint>
#include <ostream>
#include <functional>
#include <string>
#include <vector>

#include "data/tasks.h"
#include "examples/common/args.h"
#include "tensor/matmul.h"

namespace seqgrad::cli {

// A toy task's pairs as the data and train commands generate them (--task, --min-len,
// --max-len from `a`; the task's own length range where not given).
// The same pairs one at a time, for more than fit in memory (seqgrad data).
void for_each_task_pair(const Args& a, int64_t n, uint64_t seed, const std::function<void(const data::Pair&)>& each);
// The flags that choose a task: --task (its help: `help`, then every registered task's) and each
// task's own options (--symbols), which for_each_task_pair reads and refuses for another task.
std::vector<FlagSpec> task_flags(const std::string& help);
// A task's option given where no --task is (a corpus, the catalogs) is refused, saying `why`.
void check_task_options_unused(const Args& a, const std::string& why);
std::vector<data::Pair> task_pairs(const Args& a, int64_t n, uint64_t seed);

// "runs/m.safetensors" -> "runs/m.training.svg": where train draws its loss curves.
std::string svg_path_for(const std::string& checkpoint);
// "runs/m.safetensors", 3 -> "runs/m.epoch3.safetensors": an epoch's model, with --keep-last.
std::string epoch_path_for(const std::string& checkpoint, int64_t epoch);

// --precision (train, translate, eval): fp32, or bf16 for matrix products with bfloat16 inputs
// and float32 sums (tensor/matmul.h, MatmulPrecision).
MatmulPrecision precision_flag(const Args& a);
// `seqgrad train WORDS...`: 0 when finished, 128 + n when signal n stopped it (after saving a
// resume file); errors are exceptions (commands.h turns them into one line and exit code 2).
int cmd_train(const std::vector<std::string>& words, std::ostream& out);

}  // namespace seqgrad::cli
