// examples/seqgrad/main.cpp - the seqgrad command-line tool (see commands.h and README.md).
#include "examples/seqgrad/commands.h"

int main(int argc, char** argv) {
  return seqgrad::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
