// examples/seqgrad/main.cpp - the seqgrad command-line tool (see commands.h and README.md).
//
// What a process needs before the commands run: signals that would end it without a word are
// turned into errors the commands report, and the three standard streams are made safe.
#include <fcntl.h>         // POSIX: fcntl, open
#include <pthread.h>       // POSIX (and glibc's pthread_setattr_default_np)
#include <signal.h>        // POSIX: signal
#include <sys/resource.h>  // POSIX: getrlimit, setrlimit
#include <unistd.h>        // POSIX: dup2, close

#include <algorithm>
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

// The stack. Nothing in seqgrad recurses without a bound (the autograd engine walks its graph
// with an explicit stack, the JSON reader stops at a fixed depth), but a run needs a few tens
// of KB of stack (about 24 KB here, for any model; the C library alone takes several KB to
// resolve a symbol), and under `ulimit -s 16` it died of SIGSEGV without a word, at random,
// even before main. So, before anything else runs (a constructor of priority 101 comes before
// every other static initialiser, which is where it died): a soft limit below kStackWanted is
// raised as far as the hard limit lets it, for the main thread (Linux checks the limit as the
// stack grows) and, with glibc, for the threads started later (which take their size from the
// limit the process began with); a hard limit below kStackNeeded is an error that says what to do.
constexpr rlim_t kStackWanted = rlim_t{8} << 20, kStackNeeded = rlim_t{256} << 10;

__attribute__((constructor(101))) void ensure_stack() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= kStackWanted) return;
  const rlim_t raised = limit.rlim_max == RLIM_INFINITY ? kStackWanted : std::min(limit.rlim_max, kStackWanted);
  if (raised > limit.rlim_cur) {
    const struct rlimit wanted {raised, limit.rlim_max};
    if (setrlimit(RLIMIT_STACK, &wanted) == 0) limit.rlim_cur = raised;
  }
#if defined(__GLIBC__)
  pthread_attr_t defaults;
  if (pthread_getattr_default_np(&defaults) == 0) {
    size_t size = 0;
    if (pthread_attr_getstacksize(&defaults, &size) == 0 && size < limit.rlim_cur) {
      pthread_attr_setstacksize(&defaults, limit.rlim_cur);
      pthread_setattr_default_np(&defaults);
    }
    pthread_attr_destroy(&defaults);
  }
#endif
  if (limit.rlim_cur >= kStackNeeded) return;
  char message[256];
  const int n = std::snprintf(message, sizeof message,
                              "error: seqgrad: the stack is limited to %llu KB and the hard limit allows no more; expected "
                              "at least %llu KB: run it after 'ulimit -s 8192'\n",
                              static_cast<unsigned long long>(limit.rlim_cur >> 10),
                              static_cast<unsigned long long>(kStackNeeded >> 10));
  if (n > 0) {
    [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, message, std::min(static_cast<size_t>(n), sizeof message - 1));
  }
  _exit(2);  // nothing has been set up that would need tearing down
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
