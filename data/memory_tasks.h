// data/memory_tasks.h - toy tasks for networks with an external memory (nn/memory/memory.h).
//
// Stories for memory networks, generated from a seed in the manner of the bAbI tasks (Weston
// et al., 2015), so there is something to read without a download:
//   where-person  (one supporting fact)   "mary went to the kitchen . john moved to the office .
//                                           mary travelled to the garden"  where is mary -> garden
//   where-object  (two supporting facts)  "john picked up the apple . john went to the hallway"
//                                           where is the apple -> hallway
// A person's place is the one they last moved to; an object is wherever its holder now is, so
// the second task needs two lookups: who holds it, then where that person went last. Every
// story records the indices of the sentences that answer it.
// And the Neural Turing Machine's copy task: read L bit vectors, then write them out again.
// Read next: nn/memory/memory.h, examples/09_memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/vocab.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace seqgrad::data {

enum class StoryTask { WherePerson, WhereObject };
// "where-person" | "where-object"; anything else throws naming the choices.
StoryTask parse_story_task(const std::string& name);
std::string story_task_name(StoryTask task);

struct Story {
  std::vector<std::string> sentences;  // "john went to the kitchen", oldest first
  std::string question;                // "where is john"
  std::string answer;                  // "kitchen"
  std::vector<int64_t> supporting;     // indices into sentences, in the order they are needed
};

struct StoryOptions {
  int64_t n = 1000;            // stories
  int64_t min_sentences = 2;   // sentences per story, inclusive
  int64_t max_sentences = 8;
  int64_t people = 4;          // 1..8 names
  int64_t places = 6;          // 2..8 places
  uint64_t seed = 0;

  StoryOptions& with_n(int64_t v) { n = v; return *this; }
  StoryOptions& with_sentences(int64_t lo, int64_t hi) { min_sentences = lo; max_sentences = hi; return *this; }
  StoryOptions& with_people(int64_t v) { people = v; return *this; }
  StoryOptions& with_places(int64_t v) { places = v; return *this; }
  StoryOptions& with_seed(uint64_t v) { seed = v; return *this; }
};

std::vector<Story> make_stories(StoryTask task, const StoryOptions& options);

// Every word of the stories, questions and answers.
Vocab story_vocab(const std::vector<Story>& stories);

// Stories as padded ids. Sentence i of a story goes to memory slot i; a story longer than
// memory_size keeps its last memory_size sentences (the answer is always among them, or the
// story is rejected with an error). Unused slots and words are <pad> (0).
struct EncodedStories {
  Tensor story;     // (B, N, L): N = memory_size slots of up to L words
  Tensor question;  // (B, Lq)
  Tensor answer;    // (B): the answer word's id
  int64_t size() const { return answer.size(0); }
};
EncodedStories encode_stories(const std::vector<Story>& stories, const Vocab& vocab, int64_t memory_size);

// ================================================================================================
// The copy task (Graves et al., 2014): L vectors of random bits, then a delimiter; during the
// next L steps the input is blank and the target is the L vectors again, in order.
//   step      0 .. L-1         L            L+1 .. 2L
//   input     x_1 .. x_L       delimiter    blank
//   target    (ignored)        (ignored)    x_1 .. x_L
// No vector is all zeros, so an input step never looks like a blank output step.
struct CopyBatch {
  Tensor input;   // (B, 2L + 1, bits + 1): the bits, then the delimiter channel
  Tensor target;  // (B, 2L + 1, bits): 0 or 1 while answering, -100 (PyTorch's ignore_index) before
  int64_t length = 0;  // L
};
CopyBatch make_copy_batch(int64_t batch, int64_t length, int64_t bits, Generator& generator);

}  // namespace seqgrad::data
