// io/atomic_file.h - writing a file so that a reader sees the old file or the new one, never half.
//
// Every file seqgrad writes (checkpoints, resume files, SVG plots and heatmaps) goes through
// write_file_atomic: the bytes go to a temporary file next to the target, are flushed to disk,
// and the temporary file is renamed over the target (POSIX rename is atomic). On any failure
// (a full disk, a file-size limit, an unwritable folder) the temporary file is removed and the
// old file is untouched. A target that is not a regular file (a directory, /dev/null, a pipe)
// is refused before anything is written: renaming over it would replace the device or the pipe
// itself. What this is not: a lock; two processes saving one path at once each write their own
// temporary file, and the last rename wins. Read next: safetensors.h, its main user.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace seqgrad::io {

// What sits at `path` if that is not a regular file ("a directory", "a character device",
// "a pipe", ...), or "" for a regular file, a link to one, or nothing at all.
std::string non_regular_file_at(const std::string& path);

// The stem of the temporary files write_file_atomic writes first: "dir/name.tmp.PID" next to
// `path`; each temporary file is the stem and six random letters ("dir/name.tmp.PID.Xy3kQa"),
// created with O_CREAT|O_EXCL|O_NOFOLLOW, so it is always a new file of this process's own: a
// link, a pipe or a file someone planted at a name they guessed is never opened (another name
// is drawn). A name that would pass the file system's limit of 255 bytes is shortened
// ("dir/<first bytes of name>.tmp.PID"), so any name that is itself valid can be saved. A
// temporary left by a process that died writing (SIGKILL) is removed the next time the same
// file is written, once a minute has passed since its last change (write_file_atomic).
std::string temporary_path_for(const std::string& path);

// The file next to `path` that shares its stem: sibling_path("runs/m.safetensors",
// ".resume.safetensors") == "runs/m.resume.safetensors". The stem is shortened where the name
// would pass 255 bytes, so every valid name has valid siblings.
std::string sibling_path(const std::string& path, const std::string& suffix);

// Writes a file atomically. A link at `path` is replaced by the new file (the rename replaces the
// link, not what it points to); anything else that is not a regular file is refused. `write` puts the bytes into the open temporary file; a write error
// it leaves behind in the FILE is found afterwards, so it need not check each fwrite (it may
// throw, too). `op` starts every message:
//   "save: cannot write 'm.safetensors': No space left on device"
//   "save: cannot write '/dev/null': expected a regular file or a new name, got a character device"
//   "save: cannot create a temporary file next to 'no/dir/m.safetensors': No such file or directory"
// (all std::runtime_error). Ctrl-C, SIGTERM and SIGHUP are held back while the calling thread
// writes, syncs and renames, so a signal cannot leave the temporary file behind; they take
// effect right after.
void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write, const char* op);
void write_file_atomic(const std::string& path, const std::string& content, const char* op = "write");

// For a caller that should fail before hours of work rather than at the first save: checks that
// `path` is not empty, its file name fits in 255 bytes, it is not something other than a
// regular file, and its temporary file can be created (creates it and removes it). The same
// messages as write_file_atomic, with `op`.
void check_writable(const std::string& path, const char* op);

// A file written as a run goes, line by line, and read while it grows (seqgrad train's
// --loss-log): unlike the files above it is written in place, so it is opened with O_NOFOLLOW
// (a link at its name is refused, never written through) and O_NONBLOCK (a pipe at its name is
// refused at once, never waited on), and refused unless it is a regular file, a new name or a
// character device such as /dev/null (which only root can make, so none is planted):
//   "seqgrad train: cannot write --loss-log 'l.txt': expected a regular file, a new name or a
//    character device, got a symbolic link"
// It is created, or emptied, or (append) added to, only once it is known to be one of those.
class LogFile {
 public:
  LogFile() = default;
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;
  // `what` names it in messages: "seqgrad train: cannot write --loss-log 'l.txt'". Throws
  // std::runtime_error naming the path and the reason.
  void open(const std::string& path, bool append, const std::string& what);
  bool is_open() const { return fd_ >= 0; }
  // Writes all of `text` (a write the system cuts short is continued); false, with errno set, if
  // it failed (a full disk, a file-size limit).
  bool write(const std::string& text);

 private:
  int fd_ = -1;
};

// A named file a command reads or writes, for check_no_overlap: {"--train", "c.tsv"}.
struct NamedPath {
  std::string role, path;
};

// Refuses, before anything is opened for writing, an output that is the same file as an input
// or as another output (`seqgrad train --train c.tsv --loss-log c.tsv` used to empty the corpus
// before reading it). Existing files are compared by device and inode, so a hard link or
// another spelling of the path is caught; a name that does not exist yet is compared by its
// absolute, normalised path. Pairs listed in `allowed` ({output role, input role}) may be the
// same file: a resumed run rewrites the resume file it read. std::invalid_argument:
//   "seqgrad train: --loss-log 'c.tsv' is the same file as --train 'c.tsv'; expected an output
//    that is not an input"
void check_no_overlap(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs, const char* op,
                      const std::vector<std::pair<std::string, std::string>>& allowed = {});

}  // namespace seqgrad::io
