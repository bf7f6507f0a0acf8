// tests/data/test_memory_tasks.cpp - the bAbI-like stories (answers and supporting facts
// re-derived from the text), their encoding, and the copy task's batches.
#include "data/memory_tasks.h"
#include "data/tokenizer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::data;

namespace {
// "john went to the kitchen" -> {"john", "kitchen"}; "john picked up the apple" -> {"john", ""}
std::pair<std::string, std::string> who_went_where(const std::string& sentence) {
  const std::vector<std::string> w = split_whitespace(sentence);
  const bool move = w.size() == 5 && w[2] == "to";
  return {w[0], move ? w.back() : ""};
}
}  // namespace

TEST_CASE("where-person stories: the answer is the person's last move, which is the supporting fact") {
  const auto o = StoryOptions().with_n(300).with_sentences(1, 9).with_seed(5);
  const std::vector<Story> stories = make_stories(StoryTask::WherePerson, o);
  REQUIRE(stories.size() == 300);
  CHECK(make_stories(StoryTask::WherePerson, o)[7].sentences == stories[7].sentences);  // deterministic
  for (const Story& s : stories) {
    CHECK(s.sentences.size() >= 1);
    CHECK(s.sentences.size() <= 9);
    const std::string person = split_whitespace(s.question).back();
    int64_t last = -1;
    for (size_t i = 0; i < s.sentences.size(); ++i)
      if (who_went_where(s.sentences[i]).first == person) last = static_cast<int64_t>(i);
    REQUIRE(last >= 0);
    CHECK(s.supporting == std::vector<int64_t>{last});
    CHECK(who_went_where(s.sentences[last]).second == s.answer);
  }
}

TEST_CASE("where-object stories: who took the object, then where that person went last") {
  const std::vector<Story> stories = make_stories(StoryTask::WhereObject, StoryOptions().with_n(300).with_seed(6));
  for (const Story& s : stories) {
    REQUIRE(s.supporting.size() == 2);
    const std::string object = split_whitespace(s.question).back();
    const std::vector<std::string> took = split_whitespace(s.sentences[s.supporting[0]]);
    CHECK(took.back() == object);
    const std::string holder = took[0];
    int64_t last = -1;
    for (size_t i = 0; i < s.sentences.size(); ++i) {
      const auto [who, where] = who_went_where(s.sentences[i]);
      if (who == holder && !where.empty()) last = static_cast<int64_t>(i);
    }
    CHECK(s.supporting[1] == last);
    CHECK(who_went_where(s.sentences[last]).second == s.answer);
  }
  CHECK(parse_story_task("where-object") == StoryTask::WhereObject);
  CHECK(story_task_name(StoryTask::WherePerson) == "where-person");
}

TEST_CASE("encode_stories: one sentence per slot, padded; long stories keep their last sentences") {
  Story s{{"mary went to the kitchen", "john got the milk", "mary moved to the garden"}, "where is mary", "garden", {2}};
  const Vocab vocab = story_vocab({s});
  const EncodedStories e = encode_stories({s}, vocab, 4);
  CHECK(e.story.shape() == Shape{1, 4, 5});
  CHECK(e.question.shape() == Shape{1, 3});
  CHECK(e.answer.item() == static_cast<real>(vocab.id("garden")));
  CHECK(e.story.at({0, 1, 0}) == static_cast<real>(vocab.id("john")));
  CHECK(e.story.at({0, 1, 4}) == 0);  // a 4-word sentence is padded
  CHECK(max(abs(slice(e.story, 1, 3, 4))).item() == 0);  // the unused slot is all <pad>
  const EncodedStories last_two = encode_stories({s}, vocab, 2);
  CHECK(last_two.story.at({0, 0, 0}) == static_cast<real>(vocab.id("john")));
  CHECK_THROWS_WITH_AS(encode_stories({s}, vocab, 0), "encode_stories: expected memory_size >= 1, got 0", std::invalid_argument);
  s.supporting = {0};
  CHECK_THROWS_WITH_AS(encode_stories({s}, vocab, 2),
                       "encode_stories: story 0 needs sentence 0 of 3, which does not fit in 2 memory slots; expected memory_size >= 3",
                       std::invalid_argument);
}

TEST_CASE("story errors") {
  CHECK_THROWS_WITH_AS(parse_story_task("where"), "story task: expected one of where-person, where-object, got 'where'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_stories(StoryTask::WhereObject, StoryOptions().with_sentences(1, 4)),
                       "make_stories: expected 2 <= min_sentences <= max_sentences for where-object, got 1 and 4",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_stories(StoryTask::WherePerson, StoryOptions().with_places(1)),
                       "make_stories: expected 1..8 people and 2..8 places, got 4 and 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_stories(StoryTask::WherePerson, StoryOptions().with_n(-1)), "make_stories: expected n >= 0, got -1",
                       std::invalid_argument);
}

TEST_CASE("copy batches: the vectors, a delimiter, then the same vectors as targets") {
  Generator g(3);
  const CopyBatch c = make_copy_batch(/*batch=*/5, /*length=*/4, /*bits=*/3, g);
  CHECK(c.length == 4);
  CHECK(c.input.shape() == Shape{5, 9, 4});
  CHECK(c.target.shape() == Shape{5, 9, 3});
  for (int64_t b = 0; b < 5; ++b) {
    for (int64_t t = 0; t < 9; ++t) CHECK(c.input.at({b, t, 3}) == (t == 4 ? 1 : 0));  // the delimiter channel
    for (int64_t t = 0; t < 4; ++t) {
      real ones_in_vector = 0;
      for (int64_t k = 0; k < 3; ++k) {
        CHECK(c.target.at({b, 5 + t, k}) == c.input.at({b, t, k}));
        CHECK(c.target.at({b, t, k}) == -100);
        CHECK(c.input.at({b, 5 + t, k}) == 0);
        ones_in_vector += c.input.at({b, t, k});
      }
      CHECK(ones_in_vector > 0);  // never all zeros
    }
  }
  CHECK_THROWS_WITH_AS(make_copy_batch(2, 0, 3, g), "make_copy_batch: expected a positive batch, length and bits, got 2, 0 and 3",
                       std::invalid_argument);
}
