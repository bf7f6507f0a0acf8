// examples/seqgrad/commands.h - the seqgrad tool's subcommands: data, train, translate, eval,
// attention. run() is main() without the process: tests call it with words and two streams.
#pragma once

#include <iostream>
#include <string>
#include <vector>

namespace seqgrad::cli {

// words = everything after the program name. Returns the exit code: 0 on success, 2 for any
// error (printed as one line on err). Reads stdin only where a command does (translate).
int run(const std::vector<std::string>& words, std::ostream& out, std::ostream& err, std::istream& in = std::cin);

}  // namespace seqgrad::cli
