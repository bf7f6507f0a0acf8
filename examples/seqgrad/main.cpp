// examples/seqgrad/main.cpp - the seqgrad command-line tool (see commands.h and README.md).
//
// What a process needs before the commands run: signals that would end it without a word are
// turned into errors the commands report, and the three standard streams are made safe.
#include <fcntl.h>   // POSIX: fcntl, open
#include <signal.h>  // POSIX: signal

#include <cstdio>

#include "examples/seqgrad/commands.h"

namespace {

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

}  // namespace

int main(int argc, char** argv) {
  // Past `ulimit -f`, a write would kill the process with SIGXFSZ, leaving a temporary file;
  // ignored, the write fails with EFBIG, which the writer reports and cleans up after.
  signal(SIGXFSZ, SIG_IGN);
  // A reader that went away (`seqgrad data ... | head`) ends the program quietly, as any Unix
  // filter, even if the parent process ignored SIGPIPE.
  signal(SIGPIPE, SIG_DFL);
  // With a standard stream closed (`>&-`), the next file opened would take its number, and
  // output meant for the terminal would go into a checkpoint. A closed stdout is an error; a
  // closed stdin or stderr is held by /dev/null (opened, never written over), stdin read as bad.
  if (!is_open(2)) open("/dev/null", O_WRONLY);
  if (!is_open(1)) {
    std::fputs("error: seqgrad: standard output is closed; send it somewhere (> FILE or > /dev/null)\n", stderr);
    return 2;
  }
  if (!is_open(0)) {
    open("/dev/null", O_RDONLY);
    std::cin.setstate(std::ios::badbit);
  }
  return seqgrad::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
