// io/atomic_file.cpp - temporary file, flush, fsync, rename; see atomic_file.h.
//
// C stdio for the writing, because it reports *why* it failed (errno); POSIX for the rest: open
// with O_CREAT|O_EXCL|O_NOFOLLOW so a temporary file is always a new file of our own (never a
// link or a pipe someone planted at its name), getpid and random letters for its name, fsync so
// the data is on disk before the rename makes it the file, pthread_sigmask to hold signals back
// while the temporary file exists, and kill(pid, 0) to find the temporaries of processes that
// died writing.
#include "io/atomic_file.h"

#include <fcntl.h>    // POSIX: open, O_EXCL, O_NOFOLLOW
#include <pthread.h>  // POSIX: pthread_sigmask
#include <signal.h>   // POSIX: sigset_t
#include <sys/stat.h> // POSIX: stat, S_ISVTX
#include <unistd.h>   // POSIX: getpid, fsync

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "tensor/check.h"

namespace seqgrad::io {

namespace {

constexpr size_t kMaxNameBytes = 255;  // NAME_MAX of Linux, macOS and the BSDs' file systems

std::string os_reason() { return errno ? std::strerror(errno) : "unknown error"; }

// "a directory", "a character device": what sits at a path that is not a regular file.
const char* kind_of(std::filesystem::file_type type) {
  using std::filesystem::file_type;
  switch (type) {
    case file_type::directory: return "a directory";
    case file_type::character: return "a character device";
    case file_type::block: return "a block device";
    case file_type::fifo: return "a pipe";
    case file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// While it lives, SIGINT, SIGTERM and SIGHUP stay pending instead of reaching this thread. (The
// thread pool's workers block them for good, so the calling thread is the one they go to.)
class HoldSignals {
 public:
  HoldSignals() {
    sigset_t held;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~HoldSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  HoldSignals(const HoldSignals&) = delete;
  HoldSignals& operator=(const HoldSignals&) = delete;

 private:
  sigset_t previous_;
};

void refuse_non_regular(const std::string& path, const char* op) {
  check(!path.empty(), op, ": cannot write '': expected a file name, got an empty path");
  const std::string occupant = non_regular_file_at(path);
  check_state(occupant.empty(), op, ": cannot write '", path, "': expected a regular file or a new name, got ", occupant);
}

}  // namespace

std::string non_regular_file_at(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  return std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) ? kind_of(status.type()) : "";
}

std::string sibling_path(const std::string& path, const std::string& suffix) {
  const std::filesystem::path p(path);
  std::string stem = p.stem().string();
  if (stem.size() + suffix.size() > kMaxNameBytes) stem.resize(kMaxNameBytes - std::min(suffix.size(), kMaxNameBytes));
  return (p.parent_path() / (stem + suffix)).string();
}

namespace {

// "dir/name" -> {"dir/", "name"}; "name" -> {"", "name"}.
std::pair<std::string, std::string> split_folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

constexpr size_t kRandomLetters = 6;  // "name.tmp.PID.Xy3kQa": 62^6, about 5.7e10 names per PID

// The stem (no folder) of the temporaries that process `pid` writes for the file `name`,
// "name.tmp.PID", shortened so that the stem, a dot and the random letters fit in 255 bytes.
std::string temporary_stem(std::string name, long pid) {
  const std::string suffix = ".tmp." + std::to_string(pid);
  const size_t room = kMaxNameBytes - 1 - kRandomLetters;
  if (name.size() + suffix.size() > room) name.resize(room - suffix.size());
  return name + suffix;
}

// ".Xy3kQa": a dot and kRandomLetters letters or digits no one can guess in advance.
std::string random_letters() {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static std::mt19937_64 generator = [] {
    uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                    (static_cast<uint64_t>(getpid()) << 32);
    try {
      std::random_device device;  // the kernel's randomness where there is one
      seed ^= (static_cast<uint64_t>(device()) << 32) ^ device();
    } catch (const std::exception&) {  // none: the clock and the process id still differ per run
    }
    return std::mt19937_64(seed);
  }();
  static std::mutex guard;  // two threads may save at once (a plot and a checkpoint)
  const std::lock_guard<std::mutex> lock(guard);
  std::string letters = ".";
  for (size_t i = 0; i < kRandomLetters; ++i) letters += kAlphabet[generator() % (sizeof kAlphabet - 1)];
  return letters;
}

// A new temporary file next to `path`, opened for writing, and its name. O_EXCL makes it a file
// this call created (a link, a pipe or a file already at the name is an error, EEXIST, and
// another name is tried); O_NOFOLLOW refuses a link even as the last part of the name.
std::pair<std::FILE*, std::string> create_temporary(const std::string& path, const char* op) {
  const auto [folder, name] = split_folder(path);
  const std::string stem = folder + temporary_stem(name, getpid());
  for (int attempt = 0;; ++attempt) {
    std::string tmp = stem + random_letters();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      std::FILE* f = fdopen(fd, "wb");
      if (f) return {f, tmp};
      const int reason = errno;
      ::close(fd);
      std::remove(tmp.c_str());
      errno = reason;
    }
    if (fd >= 0 || errno != EEXIST || attempt == 100)
      check_state(false, op, ": cannot create a temporary file next to '", path, "': ", os_reason());
  }
}

// Is `entry` a temporary file name that process `pid` writes for `name`: the stem alone (as
// earlier versions named it) or the stem and its random letters?
bool is_temporary_of(const std::string& entry, const std::string& name, long pid) {
  const std::string stem = temporary_stem(name, pid);
  if (entry == stem) return true;
  if (entry.size() != stem.size() + 1 + kRandomLetters || entry.compare(0, stem.size() + 1, stem + ".") != 0) return false;
  return std::all_of(entry.begin() + static_cast<std::ptrdiff_t>(stem.size() + 1), entry.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// Temporary files are removed when a write fails, but a process killed outright (SIGKILL, a
// power cut) leaves its "NAME.tmp.PID.xxxxxx" behind for good. Before writing NAME, its temporaries
// whose process no longer exists (kill(pid, 0) says ESRCH) and that nobody has written to for
// a minute are removed; the minute spares a live writer this process cannot see (another PID
// namespace sharing the folder). Anything else in the folder is left alone, and a failure
// here only leaves a stale file, as before.
void remove_stale_temporaries(const std::string& folder, const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = folder.empty() ? fs::path(".") : fs::path(folder);
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    const size_t dot = entry.rfind(".tmp.");
    if (dot == std::string::npos) continue;
    const size_t digits_end = std::min(entry.find('.', dot + 5), entry.size());
    const std::string digits = entry.substr(dot + 5, digits_end - dot - 5);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == getpid() || !is_temporary_of(entry, name, pid)) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to ask
    std::error_code ec2;
    if (!fs::is_regular_file(it->symlink_status(ec2)) || now - it->last_write_time(ec2) < std::chrono::minutes(1) || ec2)
      continue;  // a link or anything else at such a name is not ours to remove
    fs::remove(it->path(), ec2);
  }
}

}  // namespace

std::string temporary_path_for(const std::string& path) {
  const auto [folder, name] = split_folder(path);
  return folder + temporary_stem(name, getpid());
}

void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write, const char* op) {
  refuse_non_regular(path, op);  // the rename below would replace a device or a pipe itself
  const auto [folder, name] = split_folder(path);
  remove_stale_temporaries(folder, name);
  const HoldSignals hold;
  std::FILE* f = nullptr;
  std::string tmp;
  std::tie(f, tmp) = create_temporary(path, op);  // (named, not bound: the lambda below captures them)
  const auto fail = [&](const std::string& reason) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw std::runtime_error(cat(op, ": cannot write '", path, "': ", reason));
  };
  try {
    errno = 0;
    write(f);
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  // A failed fwrite leaves the error flag set; buffered bytes can fail only now (a full disk
  // often shows up here); and the data must be on disk before the rename makes it the file.
  if (std::ferror(f)) fail(os_reason());
  if (std::fflush(f) != 0 || fsync(fileno(f)) != 0) fail(os_reason());
  const int closed = std::fclose(f);
  f = nullptr;
  if (closed != 0) fail(os_reason());
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(os_reason());
}

void write_file_atomic(const std::string& path, const std::string& content, const char* op) {
  write_file_atomic(path, [&](std::FILE* f) { std::fwrite(content.data(), 1, content.size(), f); }, op);
}

void check_writable(const std::string& path, const char* op) {
  refuse_non_regular(path, op);
  // Writing ends in a rename over `path`. In a sticky folder (mode 1777, as /tmp) only the owner
  // of a file, or of the folder, may replace it: creating the temporary file would succeed and
  // the rename fail, after hours of training.
  const auto [folder, name] = split_folder(path);
  struct stat folder_st, file_st;
  const uid_t me = geteuid();
  if (me != 0 && stat(folder.empty() ? "." : folder.c_str(), &folder_st) == 0 && (folder_st.st_mode & S_ISVTX) &&
      stat(path.c_str(), &file_st) == 0 && file_st.st_uid != me && folder_st.st_uid != me)
    check_state(false, op, ": cannot replace '", path, "': its folder is sticky (only a file's owner may replace a file "
                "there) and the file belongs to user ", file_st.st_uid, ", not ", me, "; expected a file of your own or a new name");
  check(name.size() <= kMaxNameBytes, op, ": cannot write '", path, "': expected a file name of at most ", kMaxNameBytes,
        " bytes, got ", name.size());
  const auto [f, tmp] = create_temporary(path, op);
  std::fclose(f);
  std::remove(tmp.c_str());
}

LogFile::~LogFile() {
  if (fd_ >= 0) ::close(fd_);
}

void LogFile::open(const std::string& path, bool append, const std::string& what) {
  check(!path.empty(), what, ": cannot write '': expected a file name, got an empty path");
  const auto refuse = [&](const std::string& reason) { check_state(false, what, " '", path, "': ", reason); };
  // A regular file, a new name, or a character device (/dev/null, /dev/full: only root can make
  // one, so none is planted). lstat, not stat: a link is named as a link.
  const auto allowed = [](mode_t mode) { return S_ISREG(mode) || S_ISCHR(mode); };
  const char* expected = "expected a regular file, a new name or a character device, got ";
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && !allowed(st.st_mode))
    refuse(cat(expected, S_ISLNK(st.st_mode) ? "a symbolic link" : kind_of(std::filesystem::status(path).type())));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (append ? O_APPEND : 0), 0666);
  if (fd < 0) refuse(os_reason());
  // What was opened is what was looked at (nothing swapped in between), and only now emptied.
  if (fstat(fd, &st) != 0 || !allowed(st.st_mode)) {
    ::close(fd);
    refuse(cat(expected, "a file that changed while it was opened"));
  }
  if ((!append && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) || fcntl(fd, F_SETFL, append ? O_APPEND : 0) != 0) {
    const int reason = errno;
    ::close(fd);
    errno = reason;
    refuse(os_reason());
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool LogFile::write(const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

namespace {

// Are a and b the same file: by device and inode if both exist, else by normalised path?
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool a_exists = fs::exists(a, ec), b_exists = fs::exists(b, ec);
  if (a_exists && b_exists) return fs::equivalent(a, b, ec) && !ec;
  if (a_exists != b_exists) return false;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec), pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return pa == pb;
}

}  // namespace

void check_no_overlap(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs, const char* op,
                      const std::vector<std::pair<std::string, std::string>>& allowed) {
  auto refuse = [&](const NamedPath& out, const NamedPath& other, const char* expected) {
    check(false, op, ": ", out.role, " '", bounded(out.path), "' is the same file as ", other.role, " '",
          bounded(other.path), "'; expected ", expected);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const NamedPath& in : inputs) {
      const bool permitted = std::find(allowed.begin(), allowed.end(), std::make_pair(outputs[i].role, in.role)) != allowed.end();
      if (!permitted && same_file(outputs[i].path, in.path)) refuse(outputs[i], in, "an output that is not an input");
    }
    for (size_t j = 0; j < i; ++j)
      if (same_file(outputs[i].path, outputs[j].path)) refuse(outputs[i], outputs[j], "each output to be its own file");
  }
}

}  // namespace seqgrad::io
