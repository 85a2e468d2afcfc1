// core/atomic_file.h - files are written whole or not at all: to a unique temporary file beside PATH, then renamed.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/interrupt.h"

namespace nbody {

// Writes PATH whole or not at all, safely when several writers save to one PATH at once:
//  1. refuses what check_output_path refuses (core/output_path.h: a symbolic link, a directory, a
//     FIFO or device, a file the user may not write, a missing or unwritable folder);
//  2. creates a temporary file of its own beside PATH (".NAME.XXXXXX", O_CREAT | O_EXCL | O_NOFOLLOW,
//     mode 0666 less the umask; a file replaced keeps its permission bits);
//  3. calls write(tmp_path) to fill it (it returns false on failure, leaving errno set);
//  4. checks that the name still holds the file it created, fsyncs and closes it, calls
//     verify(tmp_path) when given (it reads the file back, as the system holds it after the fsync,
//     and throws if it is not what was written: holes and short writes, not media errors),
//     checks PATH again (it may have gone bad during the run), renames it over PATH and fsyncs the
//     folder.
// Readers of PATH see the old file or the new one, never a mixture; of concurrent writers, the last
// rename wins whole. On any failure the temporary file is removed, PATH and everything else are left
// as they were, and an exception names PATH and `what`: InputError for what the user can fix (no such
// folder, no permission, a refused target), RuntimeFailure for the machine (disk full, I/O error).
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<bool(const std::string& tmp_path)>& write,
                           const std::function<void(const std::string& tmp_path)>& verify = {});

// Makes a rename to PATH durable: fsyncs its folder. A folder the user may not read cannot be opened to be synced: then
// the rename is left to the file system's own schedule, as most programs leave every rename. Throws RuntimeFailure
// "PATH: `what` written, but the folder F could not be synced: ..." where the sync fails.
void sync_folder(const std::string& path, const std::string& what = "output");

// The temporary files of PATH (temporary_name's, either form) that its folder holds: a writer killed before it
// renamed or removed one (SIGKILL, the out-of-memory killer, a node that went down) left it, possibly as large as
// PATH. Those of a writer at work now look the same. Names only, sorted; none where the folder cannot be read.
std::vector<std::string> temporary_files_of(const std::string& path);
// The same for every file of `folder` whose name `is_target` takes (a series' files, say): the temporary files of
// those names, with the folder.
std::vector<std::string> temporary_files_in(const std::string& folder,
                                            const std::function<bool(const std::string& name)>& is_target);

// Whether the name PATH still holds the file open as `fd`: no other file has been moved to the name, and it has not
// been removed, since the file was opened (a tidy-up of working files, another program's rename).
bool names_the_file(const std::string& path, int fd);

// A name beside PATH that no other writer uses: ".NAME." and 6 random letters, then PATH's extension
// when `keep_extension` (for a tool that goes by the ending, as ffmpeg does).
std::string temporary_name(const std::string& path, bool keep_extension = false);

// A temporary file beside PATH while it is ours (temporary_name), for a writer that moves it into place when whole:
// created exclusively (never an existing file, never through a symbolic link), with the permission bits of the file
// at PATH that it will replace, if any (best effort: a file system without them keeps the default). Closed and
// removed with its owner, and at a second Ctrl-C's immediate exit, unless disowned: moved into place, or found
// replaced by another program's file, which is not ours to remove.
class TemporaryFile {
 public:
  // Throws where it cannot be created: "`where`: cannot create a temporary file NAME: why" (InputError for what the
  // user fixes by choosing another path, RuntimeFailure for the machine: a full disk, an I/O error).
  TemporaryFile(const std::string& path, const std::string& where, bool keep_extension = false);
  TemporaryFile(TemporaryFile&& other) noexcept;
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  TemporaryFile& operator=(TemporaryFile&&) = delete;
  ~TemporaryFile();
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // Closes the descriptor: 0, or -1 with errno set (close() can report a deferred write error, on NFS).
  int close();
  // Whether the name still holds the file created here (a writer that opens it by name, another program in the
  // folder): only then may it be moved into place.
  bool still_named() const;
  void disown();

 private:
  explicit TemporaryFile(std::pair<std::string, int> created);  // its name and descriptor

  std::string path_;
  int fd_ = -1;
  bool owned_ = true;
  RemovedAtSecondInterrupt removed_at_exit_;  // a second Ctrl-C's exit removes it too
};

// One writer a PATH at a time, for as long as it writes it (a run's checkpoint, rewritten through the run): two runs
// started with one --checkpoint would otherwise both run, each replacing the other's state, and a restart would go
// on from whichever wrote last. An exclusive lock (flock) on ".NAME.lock" beside PATH, which holds the holder's
// process id and host for the refusal of another. Released, and the file removed, with its owner; a file left by a
// process killed outright holds no lock, and the next writer takes it over (a file there that no lock made, a user's,
// is locked as it is, neither written nor removed). Where no lock can be made (a file system
// without flock, a folder that takes no new file, a link at its name) it holds none, and says why (why_not).
class WriterLock {
 public:
  // Throws InputError "`given`: is being written by another run now (process 4242 on node7, which holds
  // .NAME.lock); wait for it to end, or name another file" where another writer holds PATH's lock (a lock held for a
  // moment, by a reader or a writer that lets go at once, is waited out: up to 0.1 s).
  WriterLock(const std::string& path, const std::string& given);
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();
  bool held() const { return fd_ >= 0; }
  // Whether the lock file's name still holds the file locked here: false where it was removed (a tidy-up of "stale"
  // *.lock files) or replaced during the run, after which another writer would not have been refused.
  bool still_named() const;
  // Where none is held: "cannot lock it: Function not implemented", and the like.
  const std::string& why_not() const { return why_not_; }
  const std::string& lock_path() const { return path_; }

 private:
  std::string path_;  // the lock file's
  std::string why_not_;
  int fd_ = -1;
  bool foreign_ = false;  // a file at the name that no lock made (a user's): locked, neither written nor removed
  std::optional<RemovedAtSecondInterrupt> removed_at_exit_;  // once held: a second Ctrl-C's exit removes it too
  friend class CheckpointWrite;
};

// Why PATH is no output of this process now: "is being written by another run now (process 4242 on node7, which
// holds .NAME.lock); wait for it to end, or name another file" where another process (or none that it names) holds
// PATH's WriterLock, or the lock of the series PATH is named as a file of (series_lock_name_of: a run's snapshots or
// periodic checkpoints), or this process does ("another simulation of this process") and the write is not that
// lock's holder's (CheckpointWrite); "is held open to be written now ..." where a program holds PATH itself under an
// exclusive file lock (flock: HDF5's, h5py's mode 'a' say; a run's diagnostics series' working file); else "" (nor
// where the file system has no locks). It looks and lets go: the lock file and PATH are opened read-only where they
// exist, and nothing is created. output_path_problem asks it, so that no output (a --save, a --json, Python's save,
// another run's periodic checkpoint) replaces a file a run at work writes.
std::string another_writer_of(const std::string& path);

// The lock a series' one writer holds (WriterLock) where PATH is named as one of a series' files: its file name ends
// in "_", the step in at least 8 digits, and an ending or none ("out/c_00000100.h5", "out/s_00000100.hdf5"). The
// series' pattern, the step as "########" and .h5 for both HDF5 endings (c_*.h5 and c_*.hdf5 are one series to a tool
// that reads the folder by a pattern): "out/c_########.h5". None for any other name.
std::optional<std::string> series_lock_name_of(const std::string& path);

// While one lives, this thread's outputs are the writes of `lock`'s holder (a run's checkpoint, written through the
// run): the path that lock guards is theirs to write. Null, or a lock not held: nothing is passed.
class CheckpointWrite {
 public:
  explicit CheckpointWrite(const WriterLock* lock);
  ~CheckpointWrite();
  CheckpointWrite(const CheckpointWrite&) = delete;
  CheckpointWrite& operator=(const CheckpointWrite&) = delete;

 private:
  bool pushed_ = false;
};

// Writes `bytes` to PATH the same way, read back before it is published: a file that does not hold them (a write the
// disk lost) throws RuntimeFailure and replaces nothing.
void write_bytes_file(const std::string& path, std::string_view bytes, const std::string& what);

// Writes `text` to PATH the same way (JSON, CSV, reports); `what` names it in an error.
void write_text_file(const std::string& path, const std::string& text, const std::string& what = "output");

}  // namespace nbody
