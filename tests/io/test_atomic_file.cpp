// tests/io/test_atomic_file.cpp - write_file_atomic: the old file or the new one, never half;
// never a device or a pipe replaced; no temporary file left, a dead writer's removed; signals
// held back while it writes.
#include <sys/stat.h>   // POSIX: mkfifo
#include <sys/wait.h>   // POSIX: waitpid
#include <unistd.h>     // POSIX: fork, getppid

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "io/atomic_file.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::read_file;
using seqgrad::testing::TempDir;
using seqgrad::testing::write_file;
namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t terms_seen = 0;
extern "C" void count_term(int) { terms_seen = terms_seen + 1; }

}  // namespace

TEST_CASE("write_file_atomic writes, replaces, and leaves no temporary file") {
  TempDir dir;
  const fs::path p = dir.path / "a.svg";
  io::write_file_atomic(p.string(), "first");
  CHECK(read_file(p) == "first");
  io::write_file_atomic(p.string(), "second, longer");
  CHECK(read_file(p) == "second, longer");
  CHECK(dir.count_entries() == 1u);
}

TEST_CASE("write_file_atomic removes the temporaries of processes that died writing that file, and nothing else") {
  // A process killed mid-save (SIGKILL) leaves "k.safetensors.tmp.PID"; it used to stay forever.
  TempDir dir;
  const fs::path target = dir.path / "k.safetensors";
  // A process id that is certainly free: a child that has exited and been waited for.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  const std::string dead = std::to_string(child), alive = std::to_string(getppid());
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  auto make = [&](const std::string& name, bool aged) {
    write_file((dir.path / name).string(), "partial");
    if (aged) fs::last_write_time(dir.path / name, old);
    return dir.path / name;
  };
  const fs::path stale = make("k.safetensors.tmp." + dead + ".Ab3dE9", true);
  const fs::path stale_old_name = make("k.safetensors.tmp." + dead, true);  // as earlier versions named them
  const fs::path living = make("k.safetensors.tmp." + alive, true);         // its writer is alive
  const fs::path other = make("other.safetensors.tmp." + dead, true);      // another file's
  const fs::path not_ours = make("k.safetensors.tmp." + dead + "x", true);  // not a process id
  io::write_file_atomic(target.string(), "whole");
  CHECK(read_file(target) == "whole");
  CHECK(!fs::exists(stale));
  CHECK(!fs::exists(stale_old_name));
  // A link at such a name is not a temporary this code wrote: it stays, and so does its target.
  const fs::path target_of_link = make("precious.txt", true);
  const fs::path link = dir.path / ("k.safetensors.tmp." + dead + ".Zz9yX8");
  fs::create_symlink(target_of_link, link);
  io::write_file_atomic(target.string(), "whole");
  CHECK(fs::is_symlink(link));
  CHECK(read_file(target_of_link) == "partial");
  fs::remove(link);
  fs::remove(target_of_link);
  for (const fs::path& kept : {living, other, not_ours}) {
    CAPTURE(kept.filename().string());
    CHECK(fs::exists(kept));
  }
  // A dead writer's temporary written to within the last minute may belong to a writer this
  // process cannot see: it stays until it is a minute old.
  const fs::path young = make("k.safetensors.tmp." + dead, false);
  io::write_file_atomic(target.string(), "again");
  CHECK(fs::exists(young));
}

TEST_CASE("write_file_atomic names the path and the reason when it cannot write") {
  const std::string missing = "/nonexistent-seqgrad-dir/plot.svg";
  CHECK_THROWS_WITH_AS(io::write_file_atomic(missing, "x", "save"),
                       ("save: cannot create a temporary file next to '" + missing + "': " + std::strerror(ENOENT)).c_str(),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(io::write_file_atomic("", "x", "save"), "save: cannot write '': expected a file name, got an empty path",
                       std::invalid_argument);

  // An exception from the writer removes the temporary file and keeps the old file.
  TempDir dir;
  const fs::path p = dir.path / "kept.txt";
  io::write_file_atomic(p.string(), "old");
  CHECK_THROWS_WITH_AS(io::write_file_atomic(p.string(), [](std::FILE*) { throw std::runtime_error("writer failed"); }, "save"),
                       "writer failed", std::runtime_error);
  CHECK(read_file(p) == "old");
  CHECK(dir.count_entries() == 1u);
}

TEST_CASE("write_file_atomic refuses what is not a regular file, and leaves it as it was") {
  TempDir dir;
  // A directory: refused before anything is written.
  const fs::path target = dir.path / "out.svg";
  fs::create_directories(target / "inside");
  CHECK_THROWS_WITH_AS(io::write_file_atomic(target.string(), "x", "save"),
                       ("save: cannot write '" + target.string() + "': expected a regular file or a new name, got a directory").c_str(),
                       std::runtime_error);
  CHECK(fs::is_directory(target / "inside"));

  // A pipe: refused at once (no waiting for a reader), and still a pipe.
  const fs::path fifo = dir.path / "pipe.svg";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(io::write_file_atomic(fifo.string(), "x", "save"),
                       ("save: cannot write '" + fifo.string() + "': expected a regular file or a new name, got a pipe").c_str(),
                       std::runtime_error);
  CHECK(fs::is_fifo(fifo));
  CHECK(dir.count_entries() == 2u);

  // A device: /dev/null is only looked at (refused before anything is opened or renamed).
  if (fs::exists("/dev/null")) {
    CHECK_THROWS_WITH_AS(io::write_file_atomic("/dev/null", "x", "save"),
                         "save: cannot write '/dev/null': expected a regular file or a new name, got a character device",
                         std::runtime_error);
    CHECK(fs::is_character_file("/dev/null"));
    CHECK_THROWS_WITH_AS(io::check_writable("/dev/null", "seqgrad train: --out"),
                         "seqgrad train: --out: cannot write '/dev/null': expected a regular file or a new name, got a "
                         "character device",
                         std::runtime_error);
  }
}

TEST_CASE("a file name of 252 bytes is written: the temporary name is shortened to fit") {
  TempDir dir;
  const std::string name = std::string(240, 'a') + ".safetensors";  // 252 bytes, valid
  const std::string path = (dir.path / name).string();
  const std::string tmp = io::temporary_path_for(path);  // the stem; the file adds ".XXXXXX"
  CHECK(tmp.size() - dir.path.string().size() - 1 == 255 - 7);
  CHECK(tmp.rfind(dir.path.string() + "/", 0) == 0);
  io::check_writable(path, "save");
  io::write_file_atomic(path, "weights", "save");
  CHECK(read_file(path) == "weights");
  CHECK(dir.count_entries() == 1u);
  // A short name keeps the readable form.
  CHECK(io::temporary_path_for("runs/m.safetensors") == "runs/m.safetensors.tmp." + std::to_string(getpid()));
}

TEST_CASE("a link or a FIFO planted at a temporary name is never opened; a link at the target is replaced") {
  // The temporary used to be "NAME.tmp.PID", opened with fopen: a link planted there by someone
  // who guessed the process id was written through (the file it named was emptied), and a FIFO
  // there hung the writer. Now each temporary is a new file (O_EXCL) with random letters.
  TempDir dir;
  const fs::path victim = dir.path / "victim.txt", target = dir.path / "m.safetensors";
  write_file(victim.string(), "precious");
  const std::string stem = io::temporary_path_for(target.string());
  fs::create_symlink(victim, stem);
  REQUIRE(mkfifo((stem + ".fifo").c_str(), 0600) == 0);
  io::check_writable(target.string(), "seqgrad train: --out");
  io::write_file_atomic(target.string(), "weights");
  CHECK(read_file(target) == "weights");
  CHECK(read_file(victim) == "precious");
  CHECK(fs::is_symlink(stem));
  CHECK(dir.count_entries() == 4u);  // victim, target, the link and the FIFO: no temporary left

  // A link at the target's own name: the rename replaces the link, not the file it names.
  const fs::path linked = dir.path / "linked.svg";
  fs::create_symlink(victim, linked);
  io::write_file_atomic(linked.string(), "<svg/>");
  CHECK(!fs::is_symlink(linked));
  CHECK(read_file(linked) == "<svg/>");
  CHECK(read_file(victim) == "precious");
}

TEST_CASE("LogFile writes in place but never through a link or into a FIFO, and empties only a regular file") {
  TempDir dir;
  const std::string victim = dir.file("victim.txt"), log = dir.file("loss.txt");
  write_file(victim, "precious");
  io::LogFile file;
  file.open(log, false, "train: --loss-log");
  CHECK(file.write("1 1 0.5\n"));
  file.open(log, true, "train: --loss-log");  // appending keeps what is there (a resumed run)
  CHECK(file.write("1 2 0.25\n"));
  CHECK(read_file(log) == "1 1 0.5\n1 2 0.25\n");
  file.open(log, false, "train: --loss-log");  // a new run empties it
  CHECK(read_file(log).empty());

  const std::string link = dir.file("link.txt"), fifo = dir.file("fifo.txt");
  fs::create_symlink(victim, link);
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string expected = "expected a regular file, a new name or a character device, got ";
  CHECK_THROWS_WITH_AS(file.open(link, false, "train: --loss-log"),
                       ("train: --loss-log '" + link + "': " + expected + "a symbolic link").c_str(), std::runtime_error);
  CHECK_THROWS_WITH_AS(file.open(fifo, true, "train: --loss-log"),
                       ("train: --loss-log '" + fifo + "': " + expected + "a pipe").c_str(), std::runtime_error);
  CHECK_THROWS_WITH_AS(file.open(dir.path.string(), true, "train: --loss-log"),
                       ("train: --loss-log '" + dir.path.string() + "': " + expected + "a directory").c_str(), std::runtime_error);
  CHECK(read_file(victim) == "precious");
  CHECK(fs::is_fifo(fifo));
  if (fs::exists("/dev/null")) {  // a device only root can make: allowed, and not emptied
    io::LogFile null_log;
    null_log.open("/dev/null", false, "train: --loss-log");
    CHECK(null_log.write("1 1 0.5\n"));
  }
}

TEST_CASE("SIGTERM during write_file_atomic waits until the file is in place") {
  TempDir dir;
  const fs::path p = dir.path / "m.bin";
  struct sigaction action {}, previous {};
  action.sa_handler = count_term;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, &previous);
  terms_seen = 0;
  std::sig_atomic_t seen_inside = -1;
  io::write_file_atomic(
      p.string(),
      [&](std::FILE* f) {
        std::raise(SIGTERM);  // held back: the handler must not run while the temporary file exists
        seen_inside = terms_seen;
        std::fputs("complete", f);
      },
      "save");
  const std::sig_atomic_t seen_after = terms_seen;
  sigaction(SIGTERM, &previous, nullptr);
  CHECK(seen_inside == 0);
  CHECK(seen_after == 1);  // delivered as soon as the file was renamed into place
  CHECK(read_file(p) == "complete");
  CHECK(dir.count_entries() == 1u);
}

TEST_CASE("sibling_path keeps the stem and fits 255 bytes; check_writable refuses a longer name") {
  CHECK(io::sibling_path("runs/m.safetensors", ".resume.safetensors") == "runs/m.resume.safetensors");
  CHECK(io::sibling_path("m.safetensors", ".training.svg") == "m.training.svg");
  const std::string stem(243, 's');  // "sss....safetensors" is 255 bytes, its siblings would be longer
  const std::string sibling = io::sibling_path("d/" + stem + ".safetensors", ".resume.safetensors");
  CHECK(sibling == "d/" + std::string(255 - 19, 's') + ".resume.safetensors");
  const std::string too_long = std::string(256, 'x');
  CHECK_THROWS_WITH_AS(io::check_writable(too_long, "seqgrad train: --out"),
                       ("seqgrad train: --out: cannot write '" + too_long + "': expected a file name of at most 255 bytes, got 256").c_str(),
                       std::invalid_argument);
}

TEST_CASE("check_no_overlap refuses an output that is an input or another output, by inode, before any write") {
  TempDir dir;
  const std::string corpus = dir.file("c.tsv"), link = dir.file("link.tsv"), out = dir.file("m.safetensors");
  write_file(corpus, "a\tb\n");
  fs::create_hard_link(corpus, link);
  using io::check_no_overlap;
  CHECK_NOTHROW(check_no_overlap({{"--train", corpus}}, {{"--out", out}, {"--loss-log", dir.file("log.txt")}}, "train"));
  CHECK_THROWS_WITH_AS(check_no_overlap({{"--train", corpus}}, {{"--out", out}, {"--loss-log", link}}, "train"),
                       ("train: --loss-log '" + link + "' is the same file as --train '" + corpus +
                        "'; expected an output that is not an input").c_str(),
                       std::invalid_argument);
  // Another spelling of a name that does not exist yet is still the same file.
  const std::string spelled = dir.path.string() + "/./m.safetensors";
  CHECK_THROWS_WITH_AS(check_no_overlap({}, {{"--out", out}, {"--loss-log", spelled}}, "train"),
                       ("train: --loss-log '" + spelled + "' is the same file as --out '" + out +
                        "'; expected each output to be its own file").c_str(),
                       std::invalid_argument);
  // A pair the caller allows: a resumed run rewrites the resume file it read.
  CHECK_NOTHROW(check_no_overlap({{"--resume", corpus}}, {{"the resume file", corpus}}, "train",
                                 {{"the resume file", "--resume"}}));
  CHECK(read_file(corpus) == "a\tb\n");
}

TEST_CASE("check_writable refuses, before any work, a file another user owns in a sticky folder") {
  // As an unprivileged user in a folder of mode 1777 where another user owns m.safetensors,
  // training ran a whole epoch and then could not rename over it. Needs root, to make the
  // folder and the file and then become another user in a child process.
  if (geteuid() != 0) {
    MESSAGE("not root: cannot become another user to check this");
    return;
  }
  TempDir dir;
  const fs::path sticky = dir.path / "shared";
  fs::create_directory(sticky);
  REQUIRE(chmod(sticky.c_str(), 01777) == 0);
  const std::string theirs = (sticky / "m.safetensors").string(), mine = (sticky / "new.safetensors").string();
  write_file(theirs, "root's model");  // owned by root; the child runs as nobody (65534)
  const std::string report = seqgrad::testing::in_child_process([&] {
    if (setgid(65534) != 0 || setuid(65534) != 0) return std::string("setuid failed");
    std::string seen;
    try {
      io::check_writable(theirs, "seqgrad train: --out");
      seen = "accepted";
    } catch (const std::exception& e) {
      seen = e.what();
    }
    try {
      io::check_writable(mine, "seqgrad train: --out");  // a new name in the same folder is fine
    } catch (const std::exception& e) {
      seen += std::string(" | new name refused: ") + e.what();
    }
    return seen;
  });
  CHECK(report == "seqgrad train: --out: cannot replace '" + theirs + "': its folder is sticky (only a file's owner may "
                  "replace a file there) and the file belongs to user 0, not 65534; expected a file of your own or a new name");
  CHECK(read_file(theirs) == "root's model");
}
