// data/translation.cpp - the grammar's lexicon and its three word orders.
#include "data/translation.h"

#include <string>

#include "data/tokenizer.h"
#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {
namespace {

// ================================================================================================
// The lexicon

enum class Person { Third, First, FirstPlural, ThirdPlural };

struct Subject {
  std::string en, zh, fr;
  Person person;
};
const std::vector<Subject> kSubjects = {
    {"billy", "比利", "billy", Person::Third},  {"anna", "安娜", "anna", Person::Third},
    {"tom", "汤姆", "tom", Person::Third},      {"lily", "莉莉", "lily", Person::Third},
    {"he", "他", "il", Person::Third},          {"she", "她", "elle", Person::Third},
    {"i", "我", "je", Person::First},           {"we", "我们", "nous", Person::FirstPlural},
    {"they", "他们", "ils", Person::ThirdPlural}};

struct Noun {
  std::string en, en_plural, zh, measure, fr, fr_plural;
  bool feminine;
};
struct Verb {
  // English: base, third person singular, past. French: present by person (je, il, nous, ils),
  // past participle, future by person.
  std::string en, en_s, en_past, zh;
  std::vector<std::string> fr_present, fr_future;
  std::string fr_participle;
  std::vector<Noun> objects;
};

const Noun kApple{"apple", "apples", "苹果", "个", "pomme", "pommes", true};
const Noun kBanana{"banana", "bananas", "香蕉", "根", "banane", "bananes", true};
const Noun kCake{"cake", "cakes", "蛋糕", "块", "gâteau", "gâteaux", false};
const Noun kCoffee{"coffee", "coffees", "咖啡", "杯", "café", "cafés", false};
const Noun kTea{"tea", "teas", "茶", "杯", "thé", "thés", false};
const Noun kJuice{"juice", "juices", "果汁", "杯", "jus", "jus", false};
const Noun kCat{"cat", "cats", "猫", "只", "chat", "chats", false};
const Noun kDog{"dog", "dogs", "狗", "只", "chien", "chiens", false};
const Noun kBird{"bird", "birds", "鸟", "只", "oiseau", "oiseaux", false};
const Noun kCar{"car", "cars", "车", "辆", "voiture", "voitures", true};
const Noun kBook{"book", "books", "书", "本", "livre", "livres", false};
const Noun kLetter{"letter", "letters", "信", "封", "lettre", "lettres", true};

const std::vector<Verb> kVerbs = {
    {"eat", "eats", "ate", "吃", {"mange", "mange", "mangeons", "mangent"}, {"mangerai", "mangera", "mangerons", "mangeront"},
     "mangé", {kApple, kBanana, kCake}},
    {"drink", "drinks", "drank", "喝", {"bois", "boit", "buvons", "boivent"}, {"boirai", "boira", "boirons", "boiront"},
     "bu", {kCoffee, kTea, kJuice}},
    {"see", "sees", "saw", "看见", {"vois", "voit", "voyons", "voient"}, {"verrai", "verra", "verrons", "verront"}, "vu",
     {kCat, kDog, kBird, kCar}},
    {"take", "takes", "took", "拿", {"prends", "prend", "prenons", "prennent"}, {"prendrai", "prendra", "prendrons", "prendront"},
     "pris", {kApple, kCake, kCar, kBook}},
    {"read", "reads", "read", "读", {"lis", "lit", "lisons", "lisent"}, {"lirai", "lira", "lirons", "liront"}, "lu",
     {kBook, kLetter}},
};

struct Adjective {
  std::string en, zh, fr_m, fr_f;
  bool before_noun;  // French: petit, grand come before the noun; colours after
};
const std::vector<Adjective> kAdjectives = {
    {"red", "红", "rouge", "rouge", false},  {"green", "绿", "vert", "verte", false},
    {"black", "黑", "noir", "noire", false}, {"white", "白", "blanc", "blanche", false},
    {"small", "小", "petit", "petite", true}, {"big", "大", "grand", "grande", true}};

struct Number {
  int value;
  std::string en, zh, fr;
};
const std::vector<Number> kNumbers = {{2, "two", "两", "deux"}, {3, "three", "三", "trois"}, {4, "four", "四", "quatre"},
                                      {5, "five", "五", "cinq"}};

enum class Tense { Present, Past, Future };
struct Time {
  std::string en, zh, fr;
  Tense tense;
};
const std::vector<Time> kTimes = {{"yesterday", "昨天", "hier", Tense::Past},
                                  {"tomorrow", "明天", "demain", Tense::Future},
                                  {"every day", "每天", "chaque jour", Tense::Present}};

int person_index(Person p) { return static_cast<int>(p); }

std::string french_adjective(const Adjective& a, bool feminine, bool plural) {
  std::string s = feminine ? a.fr_f : a.fr_m;
  return plural ? s + "s" : s;
}

// ================================================================================================
// One sentence in three languages

Pair make_sentence(Generator& g, TargetLanguage language) {
  auto pick = [&g](const auto& list) -> const auto& { return list[g.randint(list.size())]; };
  const Subject& subj = pick(kSubjects);
  const Verb& verb = pick(kVerbs);
  const Noun& noun = pick(verb.objects);
  const bool has_adjective = g.randint(2) == 0;
  const Adjective& adj = pick(kAdjectives);
  const bool plural = g.randint(3) == 0;
  const Number& number = pick(kNumbers);
  const bool has_time = g.randint(2) == 0;
  const Time& time = pick(kTimes);
  const Tense tense = has_time ? time.tense : static_cast<Tense>(g.randint(3));
  const bool third_singular = subj.person == Person::Third;

  // English: subject verb [number | a/an] [adjective] noun [time]
  std::string en = subj.en + " ";
  if (tense == Tense::Present) en += (third_singular ? verb.en_s : verb.en) + " ";
  if (tense == Tense::Past) en += verb.en_past + " ";
  if (tense == Tense::Future) en += "will " + verb.en + " ";
  const std::string en_noun_phrase = (has_adjective ? adj.en + " " : "") + (plural ? noun.en_plural : noun.en);
  if (plural) {
    en += number.en + " " + en_noun_phrase;
  } else {
    const char first = en_noun_phrase[0];
    en += std::string(first == 'a' || first == 'e' || first == 'i' || first == 'o' || first == 'u' ? "an " : "a ") + en_noun_phrase;
  }
  if (has_time) en += " " + time.en;

  if (language == TargetLanguage::Chinese) {
    // Chinese: subject [time] [会] verb [了] [number measure] [adjective] noun
    std::string zh = subj.zh + " ";
    if (has_time) zh += time.zh + " ";
    if (tense == Tense::Future) zh += "会 ";
    zh += verb.zh + " ";
    if (tense == Tense::Past) zh += "了 ";
    if (plural) zh += number.zh + " " + noun.measure + " ";
    zh += (has_adjective ? adj.zh + " " : "") + noun.zh;
    return {en, zh};
  }
  // French: subject verb [participle] (un|une|number) [petit/grand] noun [colour] [time]
  const int p = person_index(subj.person);
  std::string fr;
  if (tense == Tense::Past) {
    // passé composé: avoir + participle; "je ai" elides to "j'ai"
    static const char* const kAvoir[] = {"a", "ai", "avons", "ont"};  // il, je, nous, ils
    fr = p == 1 ? "j'ai " + verb.fr_participle : subj.fr + " " + kAvoir[p] + " " + verb.fr_participle;
  } else {
    static const int kForm[] = {1, 0, 2, 3};  // Third -> il form, First -> je form, ...
    const std::vector<std::string>& forms = tense == Tense::Present ? verb.fr_present : verb.fr_future;
    fr = subj.fr + " " + forms[kForm[p]];
  }
  fr += " " + (plural ? number.fr : std::string(noun.feminine ? "une" : "un"));
  if (has_adjective && adj.before_noun) fr += " " + french_adjective(adj, noun.feminine, plural);
  fr += " " + (plural ? noun.fr_plural : noun.fr);
  if (has_adjective && !adj.before_noun) fr += " " + french_adjective(adj, noun.feminine, plural);
  if (has_time) fr += " " + time.fr;
  return {en, fr};
}

}  // namespace

std::vector<Pair> make_translation_pairs(TargetLanguage language, int64_t n, int64_t min_len, int64_t max_len,
                                         uint64_t seed) {
  std::vector<Pair> pairs;
  for_each_translation_pair(language, n, min_len, max_len, seed, [&](const Pair& p) { pairs.push_back(p); });
  return pairs;
}

void for_each_translation_pair(TargetLanguage language, int64_t n, int64_t min_len, int64_t max_len, uint64_t seed,
                               const std::function<void(const Pair&)>& each) {
  check(n >= 0, "make_pairs: expected n >= 0, got ", n);
  check(min_len >= 1 && min_len <= max_len, "make_pairs: expected 1 <= min_len <= max_len, got ", min_len, " and ", max_len);
  Generator g(seed);
  for (int64_t i = 0; i < n; ++i)
    for (int attempt = 0;; ++attempt) {
      check(attempt < 1000, "make_pairs: no sentence of the translation grammar has ", min_len, "..", max_len,
            " English words (they have 3 to 8)");
      Pair p = make_sentence(g, language);
      const int64_t len = static_cast<int64_t>(split_whitespace(p.source).size());
      if (len < min_len || len > max_len) continue;
      each(p);
      break;
    }
}

SEQGRAD_REGISTER_TASK("en-zh", "toy English to Chinese: word order, measure words, tense", "space", 1, 20,
                      [](const TaskOptions& o, const std::function<void(const Pair&)>& each) {
                        for_each_translation_pair(TargetLanguage::Chinese, o.n, o.min_len, o.max_len, o.seed, each);
                      })
SEQGRAD_REGISTER_TASK("en-fr", "toy English to French: agreement, adjectives after the noun, tense", "space", 1, 20,
                      [](const TaskOptions& o, const std::function<void(const Pair&)>& each) {
                        for_each_translation_pair(TargetLanguage::French, o.n, o.min_len, o.max_len, o.seed, each);
                      })

}  // namespace seqgrad::data
