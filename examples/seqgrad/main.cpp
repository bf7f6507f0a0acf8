// examples/seqgrad/main.cpp - the seqgrad command-line tool (see commands.h and README.md).
//
// What a process needs before the commands run: signals that would end it without a word are
// turned into errors the commands report, and the three standard streams are made safe.
#include <fcntl.h>   // POSIX: fcntl, open
#include <signal.h>  // POSIX: signal
#include <unistd.h>  // POSIX: dup2, close

#include <cstdio>

#include "examples/seqgrad/commands.h"

namespace {

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

// Puts /dev/null (opened, never written over) at descriptor `fd`, which is closed.
void hold_with_null(int fd, int flags) {
  const int n = open("/dev/null", flags);
  if (n >= 0 && n != fd) {
    dup2(n, fd);
    close(n);
  }
}

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
  const bool stdin_closed = !is_open(0), stdout_closed = !is_open(1);
  if (stdin_closed) hold_with_null(0, O_RDONLY);
  if (!is_open(2)) hold_with_null(2, O_WRONLY);
  if (stdout_closed) {
    std::fputs("error: seqgrad: standard output is closed; send it somewhere (> FILE or > /dev/null)\n", stderr);
    return 2;
  }
  if (stdin_closed) std::cin.setstate(std::ios::badbit);
  return seqgrad::cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
