// tests/fuzz/fuzz_tsv.cpp - libFuzzer target: any bytes, read as a parallel corpus (TSV).
//
// Every input must end in a clean error (std::runtime_error from the reader, naming the line:
// invalid UTF-8, a control character, a missing or extra tab, an empty side) or in sentence
// pairs of valid UTF-8 with text on both sides and no control character (no tab, no line
// break), that tokenise, encode and decode through a
// vocabulary built from them, and read back unchanged after write_tsv. Run by `make fuzz`; seeds in tests/fuzz/corpus/tsv/.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "data/corpus.h"
#include "data/tokenizer.h"
#include "data/vocab.h"
#include "io/utf8.h"

using namespace seqgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<data::Pair> pairs;
  try {
    pairs = data::read_tsv(in, "fuzz.tsv");
  } catch (const std::runtime_error&) {
    return 0;
  }
  for (const data::Pair& p : pairs)
    for (const std::string* side : {&p.source, &p.target}) {
      for (const char c : *side)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) std::abort();
      if (!io::is_valid_utf8(*side) || side->find_first_not_of(" \t\n\r\f\v") == std::string::npos) std::abort();
    }

  // What seqgrad train does next: tokens, vocabularies, ids, and back.
  for (const data::Tokenization kind : {data::Tokenization::Space, data::Tokenization::Char}) {
    std::vector<std::vector<std::string>> sentences;
    try {
      for (const data::Pair& p : pairs) sentences.push_back(data::tokenize(p.source, kind));
    } catch (const std::invalid_argument&) {
      continue;  // invalid UTF-8, named with its offset
    }
    const data::Vocab vocab = data::Vocab::build(sentences, 1);
    for (const auto& tokens : sentences)
      if (vocab.decode(vocab.encode(tokens), /*strip_special=*/false) != tokens) std::abort();
  }

  std::ostringstream out;
  data::write_tsv(out, pairs);
  std::istringstream again(out.str());
  const std::vector<data::Pair> reread = data::read_tsv(again, "fuzz.tsv (written back)");
  if (reread.size() != pairs.size()) std::abort();
  for (size_t i = 0; i < pairs.size(); ++i)
    if (reread[i].source != pairs[i].source || reread[i].target != pairs[i].target) std::abort();
  return 0;
}
