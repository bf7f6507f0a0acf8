// data/bpe.cpp - learning byte-pair merges from a word table, and applying them to text.
#include "data/bpe.h"
#include "data/tokenizer.h"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <mutex>
#include <queue>
#include <ostream>
#include <sstream>
#include <utility>

#include "io/utf8.h"
#include "tensor/check.h"

namespace seqgrad::data {
namespace {

// ================================================================================================
// Words and characters

bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }

bool is_marker_at(const std::string& text, size_t i) { return text.compare(i, 3, kWordStart) == 0; }

// Throws for invalid UTF-8, naming where the text came from ("line 3: ", or "") and the
// offset of the first bad byte.
void check_utf8(const std::string& text, const std::string& where) {
  size_t bad = 0;
  if (io::is_valid_utf8(text, &bad)) return;
  std::ostringstream byte;
  byte << "0x" << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(static_cast<unsigned char>(text[bad]));
  check(false, "bpe: ", where, "expected UTF-8 text, found byte ", byte.str(), " at offset ", bad);
}

// Calls fn(word) for each word of valid UTF-8 text: words are separated by the white space
// split_whitespace splits at, and by ▁ (which marks a word start, so it is a space in text).
// `done`, if given, is asked after each word: true stops the walk there.
template <class Fn>
void for_each_word(const std::string& text, Fn fn, const std::function<bool()>& done = nullptr) {
  size_t start = 0, i = 0;
  while (i <= text.size()) {
    const bool at_end = i == text.size();
    const size_t gap = at_end ? 0 : is_space(text[i]) ? 1 : is_marker_at(text, i) ? 3 : 0;
    if (!at_end && gap == 0) {
      ++i;
      continue;
    }
    if (i > start) {
      fn(text.substr(start, i - start));
      if (done && done()) return;
    }
    i += at_end ? 1 : gap;
    start = i;
  }
}

// A word's characters, the first with the marker: "low" -> {"▁l", "o", "w"}.
std::vector<std::string> characters(const std::string& word) {
  std::vector<std::string> symbols;
  for (size_t i = 0; i < word.size();) {
    const size_t n = io::utf8_sequence_length(word, i);  // 1..4: the text was checked
    symbols.push_back((symbols.empty() ? std::string(kWordStart) : std::string()) + word.substr(i, n));
    i += n;
  }
  return symbols;
}

// Symbols are numbered, and a pair of symbol ids is one 64-bit key: left id in the high 32
// bits, right id in the low 32.
using PairKey = uint64_t;
PairKey pair_key(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }
int32_t left_of(PairKey k) { return static_cast<int32_t>(k >> 32); }
int32_t right_of(PairKey k) { return static_cast<int32_t>(k & 0xFFFFFFFFu); }

// Rewrites `symbols` with every occurrence of the pair (a, b) replaced by `ab`, left to right
// ("a a a" with the merge a a becomes "aa a"), and returns where each merge happened: its
// position before and after the rewrite. Empty when there was none.
std::vector<std::pair<size_t, size_t>> merge_pair(std::vector<int32_t>& symbols, int32_t a, int32_t b, int32_t ab) {
  std::vector<std::pair<size_t, size_t>> at;
  size_t out = 0;
  for (size_t k = 0; k < symbols.size(); ++k) {
    if (k + 1 < symbols.size() && symbols[k] == a && symbols[k + 1] == b) {
      at.emplace_back(k, out);
      symbols[out++] = ab;
      ++k;
    } else {
      symbols[out++] = symbols[k];
    }
  }
  symbols.resize(out);
  return at;
}

// ================================================================================================
// Learning: a word table, pair counts kept up to date, and a queue of the most frequent pair
//
// Re-counting every pair of the corpus after each merge (the algorithm as Sennrich et al.'s
// paper prints it) costs a pass over the corpus per merge. Instead each distinct word is held
// once with its count, the count of every adjacent pair is kept in a table, and each pair knows
// the words it occurs in. A merge of (a, b) then visits only the words holding a b: each one's
// pairs are taken out of the counts, the word is rewritten, and its new pairs are put back.
// The most frequent pair comes from a priority queue; entries whose count has since changed are
// skipped when they come up (a fresh entry was pushed with the new count).

class Learner {
 public:
  explicit Learner(const std::unordered_map<std::string, int64_t>& word_counts) : queue_(Order{&symbols_}) {
    // Sorted, so that symbol ids (and with them every container's order) do not depend on the
    // hash table's; the merges would be the same anyway, as ties are broken by text.
    // A key holding white space or ▁ (not made by count_words) counts for each of its words.
    std::map<std::string, int64_t> sorted;
    for (const auto& [text, count] : word_counts)
      if (count > 0) for_each_word(text, [&, n = count](const std::string& word) { sorted[word] += n; });
    for (const auto& [word, count] : sorted) {
      Word w{{}, count, -1};
      for (const std::string& ch : characters(word)) w.symbols.push_back(intern(ch));
      words_.push_back(std::move(w));
    }
    std::unordered_map<PairKey, int64_t> delta;
    for (int32_t i = 0; i < static_cast<int32_t>(words_.size()); ++i) add_pairs(i, +1, -1, delta);
    apply(delta);
  }

  // The most frequent pair as "left right", or "" when no pair occurs min_count times.
  std::string merge_next(int64_t min_count, int64_t merge_number) {
    while (!queue_.empty()) {
      const Candidate top = queue_.top();
      const auto it = pair_count_.find(top.key);
      if (it == pair_count_.end() || it->second != top.count) {  // stale: the count changed since
        queue_.pop();
        continue;
      }
      if (top.count < min_count) return "";
      queue_.pop();
      merge(top.key, merge_number);
      return symbols_[static_cast<size_t>(left_of(top.key))] + " " + symbols_[static_cast<size_t>(right_of(top.key))];
    }
    return "";
  }

 private:
  struct Word {
    std::vector<int32_t> symbols;
    int64_t count;
    int64_t visited;  // the last merge that looked at this word (a word is listed once per pair)
  };
  struct Candidate {
    int64_t count;
    PairKey key;
  };
  // The queue's order: "a below b" when a is less frequent, or as frequent with a pair that
  // sorts later (left symbols compared first, then right ones, by bytes).
  struct Order {
    const std::vector<std::string>* symbols;
    bool operator()(const Candidate& a, const Candidate& b) const {
      if (a.count != b.count) return a.count < b.count;
      const std::vector<std::string>& s = *symbols;
      const int left = s[static_cast<size_t>(left_of(a.key))].compare(s[static_cast<size_t>(left_of(b.key))]);
      if (left != 0) return left > 0;
      return s[static_cast<size_t>(right_of(a.key))] > s[static_cast<size_t>(right_of(b.key))];
    }
  };

  int32_t intern(const std::string& text) {
    const auto [it, added] = symbol_id_.emplace(text, static_cast<int32_t>(symbols_.size()));
    if (added) symbols_.push_back(text);
    return it->second;
  }

  // Adds sign * count for each adjacent pair of word i to `delta`, and lists the word under
  // the pairs that hold the symbol `fresh` (the others list it already; -1: list every pair).
  // Only the pairs inside symbols [lo, hi] of `symbols` (word i's, or what they are becoming).
  void add_pairs(int32_t i, const std::vector<int32_t>& symbols, size_t lo, size_t hi, int64_t sign, int32_t fresh,
                 std::unordered_map<PairKey, int64_t>& delta) {
    const int64_t count = words_[static_cast<size_t>(i)].count;
    for (size_t k = lo; k < hi && k + 1 < symbols.size(); ++k) {
      const PairKey key = pair_key(symbols[k], symbols[k + 1]);
      delta[key] += sign * count;
      if (sign > 0 && (fresh < 0 || symbols[k] == fresh || symbols[k + 1] == fresh)) pair_words_[key].push_back(i);
    }
  }
  void add_pairs(int32_t i, int64_t sign, int32_t fresh, std::unordered_map<PairKey, int64_t>& delta) {
    const std::vector<int32_t>& symbols = words_[static_cast<size_t>(i)].symbols;
    add_pairs(i, symbols, 0, symbols.size(), sign, fresh, delta);
  }

  // Folds the changes into the counts, and queues each changed pair with its new count.
  void apply(const std::unordered_map<PairKey, int64_t>& delta) {
    for (const auto& [key, change] : delta) {
      if (change == 0) continue;
      int64_t& count = pair_count_[key];
      count += change;
      if (count <= 0) {
        pair_count_.erase(key);
        pair_words_.erase(key);
      } else {
        queue_.push({count, key});
      }
    }
  }

  // [docs:bpe_merge]
  // Merges every occurrence of the pair `key` in every word that holds it.
  void merge(PairKey key, int64_t merge_number) {
    const int32_t a = left_of(key), b = right_of(key);
    const int32_t ab = intern(symbols_[static_cast<size_t>(a)] + symbols_[static_cast<size_t>(b)]);
    std::vector<int32_t> holders;
    holders.swap(pair_words_[key]);
    std::unordered_map<PairKey, int64_t> delta;
    for (const int32_t i : holders) {
      Word& w = words_[static_cast<size_t>(i)];
      if (w.visited == merge_number) continue;
      w.visited = merge_number;
      if (!merge_in_word(i, a, b, ab, delta)) continue;  // listed under the pair, but merged away since
    }
    apply(delta);
  }
  // [docs:end]

  // Rewrites word i with every a b replaced by ab, left to right, and puts the change of its
  // pair counts into `delta`. Only the pairs around each merge change: for "x a b y" the pairs
  // x a, a b, b y go and x ab, ab y come; merges side by side ("a b a b" -> "ab ab") share
  // their middle pair, so each run of them is counted as one stretch. (Taking out every pair of
  // the word and putting the new ones back cost a long unspaced word its whole length in hash
  // updates at every merge: learning from a 100 KB word took seconds.) False if a b is gone.
  bool merge_in_word(int32_t i, int32_t a, int32_t b, int32_t ab, std::unordered_map<PairKey, int64_t>& delta) {
    const std::vector<int32_t>& old = words_[static_cast<size_t>(i)].symbols;
    std::vector<int32_t> merged = old;
    const auto at = merge_pair(merged, a, b, ab);  // each merge: (position in old, position in merged)
    if (at.empty()) return false;
    for (size_t first = 0, last = 0; first < at.size(); first = last + 1) {
      last = first;
      while (last + 1 < at.size() && at[last + 1].first == at[last].first + 2) ++last;  // side by side
      // Old symbols [k0 - 1, k1 + 2] became new ones [m0 - 1, m1 + 1] (clipped at the ends).
      const size_t k0 = at[first].first, k1 = at[last].first, m0 = at[first].second, m1 = at[last].second;
      add_pairs(i, old, k0 > 0 ? k0 - 1 : 0, k1 + 2, -1, ab, delta);
      add_pairs(i, merged, m0 > 0 ? m0 - 1 : 0, m1 + 1, +1, ab, delta);
    }
    words_[static_cast<size_t>(i)].symbols.swap(merged);
    return true;
  }

  std::vector<std::string> symbols_;  // id -> text
  std::unordered_map<std::string, int32_t> symbol_id_;
  std::vector<Word> words_;
  std::unordered_map<PairKey, int64_t> pair_count_;               // occurrences in the corpus
  std::unordered_map<PairKey, std::vector<int32_t>> pair_words_;  // the words holding each pair
  std::priority_queue<Candidate, std::vector<Candidate>, Order> queue_;
};

}  // namespace

// ================================================================================================
// Construction and learning

// A word's pieces, as they were computed (bounded: text without spaces makes few repeats).
struct Bpe::Cache {
  static constexpr size_t kLimit = size_t(1) << 20;
  // Words longer than this are not kept: real words are short and repeat, and a million cached
  // megabyte-long strings (unspaced input) would be a gigabyte of memory.
  static constexpr size_t kLongestWord = 256;
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<std::string>> pieces;
};

Bpe::Bpe() : cache_(std::make_shared<Cache>()) {}

Bpe::Bpe(const std::vector<std::string>& merges) : Bpe() {
  for (size_t r = 0; r < merges.size(); ++r) {
    const std::string& m = merges[r];
    const size_t space = m.find(' ');
    const bool two = space != std::string::npos && space > 0 && space + 1 < m.size() &&
                     std::none_of(m.begin(), m.end(), [](char ch) { return ch != ' ' && is_space(ch); }) &&
                     m.find(' ', space + 1) == std::string::npos;
    check_utf8(m, cat("merge ", r + 1, ": "));
    check(two, "bpe: merge ", r + 1, " is '", m, "'; expected two symbols separated by one space, as 'e s'");
    const size_t marker = m.find(kWordStart, 1);
    check(marker == std::string::npos, "bpe: merge ", r + 1, " is '", m,
          "'; expected the word-start marker ▁ only at the start of the left symbol");
    auto id = [this](const std::string& text) {
      const auto [it, added] = symbol_ids_.emplace(text, static_cast<int32_t>(symbols_.size()));
      if (added) symbols_.push_back(text);
      return it->second;
    };
    const std::string left = m.substr(0, space), right = m.substr(space + 1);
    const int32_t a = id(left), b = id(right), ab = id(left + right);
    const auto [it, added] = rules_.emplace(pair_key(a, b), Rule{static_cast<int32_t>(r), ab});
    check(added, "bpe: merge ", r + 1, " ('", m, "') repeats merge ", it->second.rank + 1);
    merges_.push_back(m);
  }
}

void Bpe::count_words(const std::string& text, std::unordered_map<std::string, int64_t>& counts, int64_t line) {
  check_utf8(text, line > 0 ? cat("line ", line, ": ") : std::string());
  for_each_word(text, [&](const std::string& word) { ++counts[word]; });
}

Bpe Bpe::learn(const std::unordered_map<std::string, int64_t>& word_counts, int64_t merges, int64_t min_count) {
  check(merges >= 0, "bpe: expected a number of merges >= 0, got ", merges);
  check(min_count >= 1, "bpe: expected min_count >= 1, got ", min_count);
  for (const auto& [word, count] : word_counts) check_utf8(word, "");
  Learner learner(word_counts);
  std::vector<std::string> learned;
  for (int64_t m = 0; m < merges; ++m) {
    std::string next = learner.merge_next(min_count, m);
    if (next.empty()) break;
    learned.push_back(std::move(next));
  }
  return Bpe(learned);
}

Bpe Bpe::learn(const std::vector<std::string>& sentences, int64_t merges, int64_t min_count) {
  std::unordered_map<std::string, int64_t> counts;
  for (size_t i = 0; i < sentences.size(); ++i) count_words(sentences[i], counts, static_cast<int64_t>(i) + 1);
  return learn(counts, merges, min_count);
}

// ================================================================================================
// Encoding and decoding

// A word's characters as symbol ids. A character that no merge names gets the id -1 - its
// position (it keeps its text in `chars`, and merges with nothing).
std::vector<int32_t> Bpe::character_ids(const std::vector<std::string>& chars) const {
  std::vector<int32_t> ids;
  for (size_t k = 0; k < chars.size(); ++k) {
    const auto it = symbol_ids_.find(chars[k]);
    ids.push_back(it != symbol_ids_.end() ? it->second : -1 - static_cast<int32_t>(k));
  }
  return ids;
}

// The rule for the adjacent pair (a, b), or null: none was learned (or a character is unknown).
const Bpe::Rule* Bpe::rule_for(int32_t a, int32_t b) const {
  if (a < 0 || b < 0) return nullptr;
  const auto it = rules_.find(pair_key(a, b));
  return it == rules_.end() ? nullptr : &it->second;
}

void Bpe::merge_by_scanning(std::vector<int32_t>& ids) const {
  // [docs:bpe_encode_word]
  // Merge the adjacent pair learned earliest, everywhere in the word, until no adjacent pair
  // was learned: the order of learning, replayed on this one word.
  for (;;) {
    const Rule* best = nullptr;
    size_t at = 0;
    for (size_t k = 0; k + 1 < ids.size(); ++k) {
      const Rule* rule = rule_for(ids[k], ids[k + 1]);
      if (rule && (best == nullptr || rule->rank < best->rank)) {
        best = rule;
        at = k;
      }
    }
    if (best == nullptr) break;
    merge_pair(ids, ids[at], ids[at + 1], best->merged);
  }
  // [docs:end]
}

// [docs:bpe_merge_queue]
// The same merges, found with a priority queue instead of a scan of the whole word after
// every merge: that scan makes a word of n characters cost O(n^2), and one unspaced word of a
// megabyte took over a minute. Here the word is a linked list of symbols, and the queue holds
// (rank, position) for every adjacent pair that has a rule; a merge joins two list nodes and
// queues the two pairs it creates with its neighbours, so each merge costs O(log n).
// To give exactly what merge_by_scanning gives, every occurrence of the earliest pair is
// merged, left to right, before any pair that those merges create is considered: the queue
// entries of one rank (one pair) are taken out together, in order of position, and checked
// against the list as it now is (a merge just before may have used their left symbol, as the
// second "a a" of "a a a").
void Bpe::merge_with_queue(std::vector<int32_t>& ids) const {
  const int32_t n = static_cast<int32_t>(ids.size());
  std::vector<int32_t> next(n), prev(n);
  std::vector<char> alive(n, 1);
  for (int32_t k = 0; k < n; ++k) {
    next[k] = k + 1 < n ? k + 1 : -1;
    prev[k] = k - 1;
  }
  using Entry = std::pair<int32_t, int32_t>;  // (rank, position of the pair's left symbol)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  auto push = [&](int32_t left) {
    if (left < 0 || next[left] < 0) return;
    if (const Rule* rule = rule_for(ids[left], ids[next[left]])) queue.emplace(rule->rank, left);
  };
  for (int32_t k = 0; k + 1 < n; ++k) push(k);
  std::vector<int32_t> batch, merged;
  while (!queue.empty()) {
    const int32_t rank = queue.top().first;
    batch.clear();
    for (; !queue.empty() && queue.top().first == rank; queue.pop()) batch.push_back(queue.top().second);
    merged.clear();
    for (const int32_t left : batch) {  // in order of position: the queue breaks ties by it
      if (!alive[left] || next[left] < 0) continue;
      const Rule* rule = rule_for(ids[left], ids[next[left]]);
      if (!rule || rule->rank != rank) continue;  // no longer this pair
      const int32_t right = next[left];
      ids[left] = rule->merged;
      alive[right] = 0;
      next[left] = next[right];
      if (next[right] >= 0) prev[next[right]] = left;
      merged.push_back(left);
    }
    for (const int32_t k : merged) {  // the pairs the merges made, with their neighbours
      if (!alive[k]) continue;
      if (prev[k] >= 0 && !std::binary_search(merged.begin(), merged.end(), prev[k])) push(prev[k]);
      push(k);
    }
  }
  size_t out = 0;
  for (int32_t k = 0; k < n; ++k)
    if (alive[k]) ids[out++] = ids[k];
  ids.resize(out);
}
// [docs:end]

void Bpe::encode_word(const std::string& word, std::vector<std::string>& pieces, bool by_scanning) const {
  if (!by_scanning) {
    const std::lock_guard<std::mutex> lock(cache_->mutex);
    const auto hit = cache_->pieces.find(word);
    if (hit != cache_->pieces.end()) {
      pieces.insert(pieces.end(), hit->second.begin(), hit->second.end());
      return;
    }
  }
  const std::vector<std::string> chars = characters(word);
  std::vector<int32_t> ids = character_ids(chars);
  if (by_scanning)
    merge_by_scanning(ids);
  else
    merge_with_queue(ids);
  std::vector<std::string> symbols;
  for (const int32_t id : ids) symbols.push_back(id >= 0 ? symbols_[static_cast<size_t>(id)] : chars[static_cast<size_t>(-1 - id)]);
  pieces.insert(pieces.end(), symbols.begin(), symbols.end());
  if (by_scanning || word.size() > Cache::kLongestWord) return;
  const std::lock_guard<std::mutex> lock(cache_->mutex);
  if (cache_->pieces.size() < Cache::kLimit) cache_->pieces.emplace(word, std::move(symbols));
}

std::vector<std::string> Bpe::encode(const std::string& text, size_t max_pieces) const {
  check_utf8(text, "");
  std::vector<std::string> pieces;
  if (max_pieces == 0) return pieces;
  // Words are encoded one by one, so the first max_pieces pieces come from the first words
  // alone: the rest of a long text is not encoded at all.
  for_each_word(
      text, [&](const std::string& word) { encode_word(word, pieces, /*by_scanning=*/false); },
      [&] { return pieces.size() >= max_pieces; });
  if (pieces.size() > max_pieces) pieces.resize(max_pieces);
  return pieces;
}

std::vector<std::string> Bpe::encode_reference(const std::string& text) const {
  check_utf8(text, "");
  std::vector<std::string> pieces;
  for_each_word(text, [&](const std::string& word) { encode_word(word, pieces, /*by_scanning=*/true); });
  return pieces;
}

std::string Bpe::decode(const std::vector<std::string>& pieces) {
  std::string joined;
  for (const std::string& p : pieces) joined += p;
  std::string text;
  for (size_t i = 0; i < joined.size();) {
    if (is_marker_at(joined, i)) {
      if (!text.empty()) text += ' ';  // the first word's marker stands for no space
      i += 3;
    } else {
      text += joined[i++];
    }
  }
  return text;
}

// ================================================================================================
// The "bpe" tokenizer (data/tokenizer.h): merges learned from one side of the training pairs

namespace {

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(int64_t merges) : merges_(merges) {}

  std::vector<std::string> encode(const std::string& text, size_t max_tokens) const override {
    return bpe_.encode(text, max_tokens);
  }
  std::string decode(const std::vector<std::string>& tokens) const override {
    return Bpe::decode(tokens);  // "▁bil" "ly" "▁ate" -> "billy ate"
  }
  bool pieces_of_words() const override { return true; }

  // Learns up to --bpe-merges merges from the side's words, and says how many it found.
  bool learns() const override { return true; }
  void learn(const std::vector<std::string_view>& sentences, const std::string& side, std::ostream& out) override {
    std::unordered_map<std::string, int64_t> words;
    for (const std::string_view sentence : sentences) Bpe::count_words(std::string(sentence), words);
    bpe_ = Bpe::learn(words, merges_);
    out << "bpe: " << bpe_.size() << " merges learned for the " << side << " (" << words.size() << " distinct words)\n";
    // Too many merges for the data make every word one piece: a word seen once is then a
    // piece seen once, and subwords no longer help with new words (exact match fell to 0).
    int64_t whole = 0;
    for (const auto& [word, count] : words) whole += bpe_.encode(word).size() == 1;
    if (bpe_.size() < merges_ && words.size() >= 10 && whole * 10 >= static_cast<int64_t>(words.size()) * 9)
      out << "warning: the text ran out of pairs to merge after " << bpe_.size() << " of the " << merges_
          << " merges asked for, and " << whole << " of the " << words.size() << " distinct " << side
          << " words are a single piece: a new word cannot be read as known pieces; give fewer (--bpe-merges "
          << std::max<size_t>(1, words.size() / 4) << ", say)\n";
  }
  // The merges in the order they were learned, "e s", "es t", ... (checked by Bpe's constructor).
  std::vector<std::string> learned() const override { return bpe_.merges(); }
  void restore(const std::vector<std::string>& learned) override { bpe_ = Bpe(learned); }

 private:
  int64_t merges_;  // how many to learn
  Bpe bpe_;
};

}  // namespace

SEQGRAD_REGISTER_TOKENIZER("bpe", "subwords: byte-pair encoding learned from the training data (Sennrich et al., 2016)",
                           [](const Settings& s) { return std::make_unique<BpeTokenizer>(s.integer("bpe_merges")); },
                           {integer_option("bpe_merges", kDefaultBpeMerges, 1, 1000000,
                                           "merges (subwords beyond the characters) each bpe side learns, fewer once "
                                           "no pair of pieces occurs twice; the default suits 10k to 1M pairs (a few "
                                           "thousand do best on 10k, millions use 30k+)")})

}  // namespace seqgrad::data
