// data/corpus.h - reading and writing parallel corpora: one "source<TAB>target" pair per line.
//
// Files are UTF-8. Blank lines are skipped; trailing '\r's (Windows line ends) are removed. A
// line without exactly one tab, with an empty side or with invalid UTF-8, a file that cannot
// be read and a file with no pairs are errors that name the file and the line
// ("corpus.tsv:12: expected 'source<TAB>target', found no tab"), raised while reading, before
// any training starts. The text is not tokenised here: that is tokenizer.h's job, chosen per
// side.
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "data/tasks.h"

namespace seqgrad::data {

// `name` is used in error messages (the path, or "<stdin>").
std::vector<Pair> read_tsv(std::istream& in, const std::string& name);
std::vector<Pair> read_tsv_file(const std::string& path);
void write_tsv(std::ostream& out, const std::vector<Pair>& pairs);

}  // namespace seqgrad::data
