// data/memory_tasks.cpp - bAbI-like stories and their encoding, and the copy task (see memory_tasks.h).
#include "data/memory_tasks.h"

#include <algorithm>
#include <map>

#include "data/tokenizer.h"
#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {

StoryTask parse_story_task(const std::string& name) {
  if (name == "where-person") return StoryTask::WherePerson;
  if (name == "where-object") return StoryTask::WhereObject;
  check(false, "story task: expected one of where-person, where-object, got '", name, "'");
  return StoryTask::WherePerson;
}

std::string story_task_name(StoryTask task) {
  return task == StoryTask::WherePerson ? "where-person" : "where-object";
}

// ================================================================================================
// Generation

namespace {

const char* const kPeople[] = {"mary", "john", "sandra", "daniel", "anna", "billy", "lily", "tom"};
const char* const kPlaces[] = {"kitchen", "garden", "office", "hallway", "bedroom", "bathroom", "cellar", "attic"};
const char* const kMoves[] = {"went to the", "moved to the", "travelled to the", "journeyed to the"};
const char* const kObjects[] = {"apple", "football", "milk"};
const char* const kTakes[] = {"picked up the", "got the", "grabbed the"};

template <size_t K>
std::string pick(const char* const (&words)[K], Generator& g) {
  return words[g.randint(K)];
}

// One story of `length` sentences, or an empty story when no question can be asked about it
// (nobody has moved, or no held object's holder has a place yet); the caller draws again.
Story draw_story(StoryTask task, int64_t length, const StoryOptions& o, Generator& g) {
  Story s;
  std::map<int64_t, int64_t> place, last_move;  // person -> place id, -> sentence index
  std::map<int64_t, int64_t> holder, taken_at;  // object -> person, -> sentence index
  for (int64_t i = 0; i < length; ++i) {
    const int64_t person = static_cast<int64_t>(g.randint(static_cast<uint64_t>(o.people)));
    const bool take = task == StoryTask::WhereObject && holder.size() < 3 && g.uniform() < 0.3;
    if (take) {
      int64_t object = static_cast<int64_t>(g.randint(3));
      while (holder.count(object)) object = (object + 1) % 3;
      holder[object] = person;
      taken_at[object] = i;
      s.sentences.push_back(std::string(kPeople[person]) + " " + pick(kTakes, g) + " " + kObjects[object]);
    } else {
      int64_t to = static_cast<int64_t>(g.randint(static_cast<uint64_t>(o.places)));
      if (place.count(person) && place[person] == to) to = (to + 1) % o.places;  // always a new place
      place[person] = to;
      last_move[person] = i;
      s.sentences.push_back(std::string(kPeople[person]) + " " + pick(kMoves, g) + " " + kPlaces[to]);
    }
  }
  if (task == StoryTask::WherePerson) {
    if (place.empty()) return Story{};
    auto it = place.begin();
    std::advance(it, static_cast<long>(g.randint(place.size())));
    s.question = std::string("where is ") + kPeople[it->first];
    s.answer = kPlaces[it->second];
    s.supporting = {last_move[it->first]};
    return s;
  }
  std::vector<int64_t> askable;  // held objects whose holder has been somewhere
  for (const auto& [object, person] : holder)
    if (place.count(person)) askable.push_back(object);
  if (askable.empty()) return Story{};
  const int64_t object = askable[g.randint(askable.size())], person = holder[object];
  s.question = std::string("where is the ") + kObjects[object];
  s.answer = kPlaces[place[person]];
  s.supporting = {taken_at[object], last_move[person]};
  return s;
}

}  // namespace

std::vector<Story> make_stories(StoryTask task, const StoryOptions& o) {
  const int64_t fewest = task == StoryTask::WhereObject ? 2 : 1;
  check(o.min_sentences >= fewest && o.max_sentences >= o.min_sentences, "make_stories: expected ", fewest,
        " <= min_sentences <= max_sentences for ", story_task_name(task), ", got ", o.min_sentences, " and ",
        o.max_sentences);
  check(o.people >= 1 && o.people <= 8 && o.places >= 2 && o.places <= 8,
        "make_stories: expected 1..8 people and 2..8 places, got ", o.people, " and ", o.places);
  check(o.n >= 0, "make_stories: expected n >= 0, got ", o.n);
  Generator g(o.seed);
  std::vector<Story> stories;
  while (static_cast<int64_t>(stories.size()) < o.n) {
    const int64_t span = o.max_sentences - o.min_sentences + 1;
    const int64_t length = o.min_sentences + static_cast<int64_t>(g.randint(static_cast<uint64_t>(span)));
    Story s = draw_story(task, length, o, g);
    if (!s.sentences.empty()) stories.push_back(std::move(s));
  }
  return stories;
}

Vocab story_vocab(const std::vector<Story>& stories) {
  std::vector<std::vector<std::string>> text;
  for (const Story& s : stories) {
    for (const std::string& sentence : s.sentences) text.push_back(split_whitespace(sentence));
    text.push_back(split_whitespace(s.question));
    text.push_back({s.answer});
  }
  return Vocab::build(text);
}

// ================================================================================================
// Encoding

EncodedStories encode_stories(const std::vector<Story>& stories, const Vocab& vocab, int64_t memory_size) {
  check(memory_size >= 1, "encode_stories: expected memory_size >= 1, got ", memory_size);
  const int64_t B = static_cast<int64_t>(stories.size()), N = memory_size;
  int64_t L = 1, Lq = 1;
  for (const Story& s : stories) {
    for (const std::string& sentence : s.sentences) L = std::max<int64_t>(L, split_whitespace(sentence).size());
    Lq = std::max<int64_t>(Lq, split_whitespace(s.question).size());
  }
  EncodedStories e{zeros({B, N, L}), zeros({B, Lq}), zeros({B})};
  for (int64_t b = 0; b < B; ++b) {
    const Story& s = stories[b];
    const int64_t count = static_cast<int64_t>(s.sentences.size()), first = std::max<int64_t>(0, count - N);
    for (int64_t i : s.supporting)
      check(i >= first, "encode_stories: story ", b, " needs sentence ", i, " of ", count,
            ", which does not fit in ", N, " memory slots; expected memory_size >= ", count - i);
    for (int64_t i = first; i < count; ++i) {
      const std::vector<int64_t> ids = vocab.encode(split_whitespace(s.sentences[i]));
      for (size_t w = 0; w < ids.size(); ++w) e.story.data()[((b * N) + (i - first)) * L + static_cast<int64_t>(w)] = static_cast<real>(ids[w]);
    }
    const std::vector<int64_t> q = vocab.encode(split_whitespace(s.question));
    for (size_t w = 0; w < q.size(); ++w) e.question.data()[b * Lq + static_cast<int64_t>(w)] = static_cast<real>(q[w]);
    e.answer.data()[b] = static_cast<real>(vocab.id(s.answer));
  }
  return e;
}

// ================================================================================================
// The copy task

CopyBatch make_copy_batch(int64_t B, int64_t L, int64_t bits, Generator& g) {
  check(B >= 1 && L >= 1 && bits >= 1, "make_copy_batch: expected a positive batch, length and bits, got ", B, ", ",
        L, " and ", bits);
  const int64_t T = 2 * L + 1;
  CopyBatch c{zeros({B, T, bits + 1}), full({B, T, bits}, real(-100)), L};
  std::vector<real> v(static_cast<size_t>(bits));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      bool any = false;
      while (!any) {  // draw again the rare all-zero vector
        for (real& x : v) any |= (x = static_cast<real>(g.randint(2))) != 0;
      }
      for (int64_t k = 0; k < bits; ++k) {
        c.input.data()[(b * T + t) * (bits + 1) + k] = v[k];       // shown at step t
        c.target.data()[(b * T + L + 1 + t) * bits + k] = v[k];    // asked for at step L + 1 + t
      }
    }
    c.input.data()[(b * T + L) * (bits + 1) + bits] = 1;  // the delimiter
  }
  return c;
}

}  // namespace seqgrad::data
