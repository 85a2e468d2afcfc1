// core/atomic_file.cpp - a unique temporary file beside the target, fsync, rename, fsync of the folder.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_path.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;

std::string error_text(int err) { return std::generic_category().message(err); }

// Failures of the machine; everything else (permissions, missing folders, read-only file systems,
// names too long) the user fixes by choosing another path.
[[noreturn]] void throw_for(int err, const std::string& message) {
  if (err == ENOSPC || err == EIO || err == EDQUOT) throw RuntimeFailure(message);
  throw InputError(message);
}



}  // namespace

bool names_the_file(const std::string& path, int fd) {
  struct stat open_file {}, named {};
  return ::fstat(fd, &open_file) == 0 && ::lstat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

namespace {

// The temporary file's name and descriptor (TemporaryFile's constructor).
std::pair<std::string, int> create_beside(const std::string& path, const std::string& where, bool keep_extension) {
  struct stat old {};
  bool const replacing = ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  for (int attempt = 0;; ++attempt) {
    std::string name = temporary_name(path, keep_extension);
    int const fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      if (replacing) static_cast<void>(::fchmod(fd, old.st_mode & 0777));
      return {std::move(name), fd};
    }
    int const err = errno;
    if (err != EEXIST || attempt == 100)
      throw_for(err, where + ": cannot create a temporary file " + name + ": " + error_text(err));
  }
}

}  // namespace

TemporaryFile::TemporaryFile(const std::string& path, const std::string& where, bool keep_extension)
    : TemporaryFile(create_beside(path, where, keep_extension)) {}

TemporaryFile::TemporaryFile(std::pair<std::string, int> created)
    : path_(std::move(created.first)), fd_(created.second), removed_at_exit_(path_) {}

TemporaryFile::TemporaryFile(TemporaryFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      owned_(std::exchange(other.owned_, false)),
      removed_at_exit_(std::move(other.removed_at_exit_)) {}

TemporaryFile::~TemporaryFile() {
  if (fd_ >= 0) ::close(fd_);
  if (owned_) ::unlink(path_.c_str());
}

int TemporaryFile::close() {
  int const rc = ::close(fd_);
  fd_ = -1;
  return rc;
}

bool TemporaryFile::still_named() const { return names_the_file(path_, fd_); }

void TemporaryFile::disown() {
  owned_ = false;
  removed_at_exit_.release();
}

// Beside PATH because a rename is atomic only within one file system; hidden, so that listings and
// globs skip it. The pid is mixed into every draw: a forked child inherits the generator's state, not
// its parent's names.
std::string temporary_name(const std::string& path, bool keep_extension) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 random_bits{(std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}()};
  std::uint64_t bits = random_bits() ^ (std::uint64_t(::getpid()) * 0x9E3779B97F4A7C15ull);
  std::string suffix(6, 'x');
  for (char& c : suffix) {
    c = kLetters[bits % 62];
    bits /= 62;
  }
  fs::path const p(path);
  std::string const extension = keep_extension ? p.extension().string() : std::string();
  return (p.parent_path() / ("." + p.filename().string() + "." + suffix + extension)).string();
}


std::vector<std::string> temporary_files_in(const std::string& folder_path,
                                            const std::function<bool(const std::string& name)>& is_target) {
  std::error_code ec;
  std::vector<std::string> found;
  fs::path const folder = folder_path.empty() ? fs::path(".") : fs::path(folder_path);
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    // ".NAME." and six letters and digits, not all small letters (a user's ".c.h5.backup" is no temporary file; one
    // of these is all small letters once in 180, and then goes unsaid), then NAME's extension or nothing.
    std::string const name = it->path().filename().string();
    if (name.size() < 9 || name[0] != '.') continue;
    for (std::size_t dot = name.find('.', 1); dot != std::string::npos; dot = name.find('.', dot + 1)) {
      std::string const target = name.substr(1, dot - 1), rest = name.substr(dot + 1);
      if (target.empty() || rest.size() < 6) continue;
      bool const letters =
          std::all_of(rest.begin(), rest.begin() + 6, [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }) &&
          !std::all_of(rest.begin(), rest.begin() + 6, [](char c) { return std::islower(static_cast<unsigned char>(c)); });
      if (letters && (rest.size() == 6 || rest.substr(6) == fs::path(target).extension().string()) &&
          is_target(target) && it->is_regular_file(ec)) {
        found.push_back((fs::path(folder_path) / name).string());
        break;
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> temporary_files_of(const std::string& path) {
  fs::path const p(path);
  std::string const file = p.filename().string();
  return temporary_files_in(p.parent_path().string(), [&](const std::string& name) { return name == file; });
}

void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<bool(const std::string& tmp_path)>& write,
                           const std::function<void(const std::string& tmp_path)>& verify) {
  auto refuse_if_bad = [&] {
    if (auto const problem = output_path_problem(path); !problem.empty())
      throw InputError(path + ": cannot write " + what + ": " + problem);
  };
  refuse_if_bad();
  TemporaryFile tmp(path, path + ": cannot write " + what);
  auto fail = [&](const std::string& doing, int err) {
    throw_for(err, path + ": " + doing + " " + what + ": " + (err ? error_text(err) : "failed"));
  };

  errno = 0;
  if (!write(tmp.path())) fail("cannot write", errno);
  // The writer opened the file by name: move it into place only if the name still holds the file
  // created above, so that nothing but this writer's bytes ever becomes PATH.
  if (!tmp.still_named()) {
    tmp.disown();
    throw InputError(path + ": cannot write " + what + ": the temporary file " + tmp.path() +
                     " was replaced while it was written; is another program writing in its folder?");
  }
  if (::fsync(tmp.fd()) != 0) fail("cannot write", errno);
  if (tmp.close() != 0) fail("cannot write", errno);
  if (verify) verify(tmp.path());  // the file as the system now holds it: a hole or a short write stops here
  refuse_if_bad();  // the target may have become a link, a folder or read-only during the run
  if (::rename(tmp.path().c_str(), path.c_str()) != 0) fail("cannot move into place", errno);
  tmp.disown();
  sync_folder(path, what);
}

namespace {

std::string lock_path_of(const std::string& path) {
  return (fs::path(path).parent_path() / ("." + fs::path(path).filename().string() + ".lock")).string();
}

// The lock files this process holds (device and inode, with the process: a child forked meanwhile holds none of them
// as its own).
struct HeldLock {
  pid_t process;
  dev_t device;
  ino_t inode;
};
std::mutex held_mutex;
std::vector<HeldLock> held_locks;
// The locks whose holders' writes this thread makes now (CheckpointWrite): device and inode.
thread_local std::vector<std::pair<dev_t, ino_t>> writing_for;

bool writes_for(const struct stat& lock) {
  return std::find(writing_for.begin(), writing_for.end(), std::make_pair(lock.st_dev, lock.st_ino)) !=
         writing_for.end();
}

bool held_here(int fd) {
  struct stat s {};
  if (::fstat(fd, &s) != 0) return false;
  pid_t const self = ::getpid();
  std::lock_guard<std::mutex> const guard(held_mutex);
  return std::any_of(held_locks.begin(), held_locks.end(), [&](const HeldLock& h) {
    return h.process == self && h.device == s.st_dev && h.inode == s.st_ino;
  });
}

void hold_here(int fd, bool held) {
  struct stat s {};
  if (::fstat(fd, &s) != 0) return;
  std::lock_guard<std::mutex> const guard(held_mutex);
  if (held) {
    held_locks.push_back({::getpid(), s.st_dev, s.st_ino});
    return;
  }
  auto const it = std::find_if(held_locks.begin(), held_locks.end(), [&](const HeldLock& h) {
    return h.process == ::getpid() && h.device == s.st_dev && h.inode == s.st_ino;
  });
  if (it != held_locks.end()) held_locks.erase(it);
}

// The holder a lock file names: "process 4242 on node7", "another simulation of this process", or "another process"
// where it names none. A holder writes its name just after it takes the lock: an empty file is read again, briefly.
std::string holder_of(int fd) {
  std::string holder;
  for (int attempt = 0; attempt < 20 && holder.empty(); ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    char text[256] = {};
    ssize_t const n = ::pread(fd, text, sizeof text - 1, 0);
    holder.assign(text, n > 0 ? std::size_t(n) : 0);
    while (!holder.empty() && std::isspace(static_cast<unsigned char>(holder.back()))) holder.pop_back();
  }
  unsigned long pid = 0;
  char host[200] = {};
  if (std::sscanf(holder.c_str(), "%lu %199s", &pid, host) != 2) return "another process";
  char here[256] = {};
  ::gethostname(here, sizeof here - 1);
  if (std::string(host) != here) return "process " + std::to_string(pid) + " on " + host;
  if (pid == static_cast<unsigned long>(::getpid())) return "another simulation of this process";
  // A holder that could not write its name over a file another user's killed run left (read-only to it) leaves
  // that run's: a process of this host that is gone holds nothing.
  if (pid > static_cast<unsigned long>(std::numeric_limits<pid_t>::max()) ||
      (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH))
    return "another process";
  return "process " + std::to_string(pid) + " on " + host;
}

// Whether the file a lock's name holds is one a writer's lock could have left: empty, or a holder's "PID HOST" line.
// Anything else is not nbody's (a user's file that happens to have the name): locked, but left as it is.
bool reads_as_lock(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (st.st_size == 0) return true;
  if (st.st_size > 300) return false;
  char text[320] = {};
  ssize_t const n = ::pread(fd, text, sizeof text - 1, 0);
  if (n != st.st_size) return false;
  unsigned long pid = 0;
  char host[256] = {};
  int end = 0;
  if (std::sscanf(text, "%lu %255s%n", &pid, host, &end) != 2) return false;
  return std::string_view(text + end).find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::string being_written(const std::string& holder, const std::string& lock_path) {
  return "is being written by another run now (" + holder + ", which holds " + lock_path +
         "); wait for it to end, or name another file";
}

// A lock taken for a moment by a reader (another_writer_of) or by a writer that then finds the name changed: tried
// again for this long before the holder is taken for a writer at work.
constexpr int kLockAttempts = 10;
constexpr auto kLockRetry = std::chrono::milliseconds(10);

}  // namespace

WriterLock::WriterLock(const std::string& path, const std::string& given) : path_(lock_path_of(path)) {
  // The lock is the file's that the name holds once it is taken: a holder that let go removed the name (a new
  // file may have taken it since), and then the lock taken was on a file no other writer will find.
  int busy = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EACCES) fd = ::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);  // another user's
    if (fd < 0) {
      why_not_ = "cannot open it: " + error_text(errno);
      break;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int const err = errno;
      if (err != EWOULDBLOCK) {  // no locks on this file system
        ::close(fd);
        why_not_ = "cannot lock it: " + error_text(err);
        break;
      }
      if (++busy < kLockAttempts && !held_here(fd)) {
        ::close(fd);
        std::this_thread::sleep_for(kLockRetry);
        continue;
      }
      std::string const holder = holder_of(fd);
      ::close(fd);
      throw InputError(given + ": " + being_written(holder, path_));
    }
    if (names_the_file(path_, fd)) {
      if (!reads_as_lock(fd)) {  // locked all the same, but neither written nor removed
        fd_ = fd;
        foreign_ = true;
        hold_here(fd_, true);
        return;
      }
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      std::string const text = std::to_string(::getpid()) + " " + (host[0] ? host : "localhost") + "\n";
      if (::ftruncate(fd, 0) == 0) static_cast<void>(::pwrite(fd, text.data(), text.size(), 0));
      fd_ = fd;
      hold_here(fd_, true);
      removed_at_exit_.emplace(path_);
      return;
    }
    ::close(fd);
  }
  if (why_not_.empty()) why_not_ = "its name kept changing";
}

bool WriterLock::still_named() const { return fd_ >= 0 && names_the_file(path_, fd_); }

WriterLock::~WriterLock() {
  if (fd_ < 0) return;
  removed_at_exit_.reset();  // from here on the name may soon be another writer's
  hold_here(fd_, false);
  // Removed before the lock goes, so that a writer waiting on this file finds it unnamed and tries again; only while
  // the name still holds it (a file removed from outside may have been replaced by another writer's since).
  if (!foreign_ && names_the_file(path_, fd_)) ::unlink(path_.c_str());
  ::close(fd_);
}

CheckpointWrite::CheckpointWrite(const WriterLock* lock) {
  struct stat s {};
  if (!lock || lock->fd_ < 0 || ::fstat(lock->fd_, &s) != 0) return;
  writing_for.emplace_back(s.st_dev, s.st_ino);
  pushed_ = true;
}

CheckpointWrite::~CheckpointWrite() {
  if (pushed_) writing_for.pop_back();
}

namespace {

// Why PATH is no output of this process now by its WriterLock (".NAME.lock" beside it), or "".
std::string writer_by_lock(const std::string& path) {
  std::string const lock_path = lock_path_of(path);
  // The lock file at the name, once it is shown held or free: one let go and unnamed meanwhile is looked up again.
  for (int attempt = 0; attempt < kLockAttempts; ++attempt) {
    if (attempt) std::this_thread::sleep_for(kLockRetry);
    // Read-only and non-blocking: a FIFO put at the name cannot hold the check up, and nothing is created.
    int const fd = ::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return "";
    struct stat s {};
    std::string problem;
    bool settled = true;
    if (::fstat(fd, &s) == 0 && S_ISREG(s.st_mode)) {
      if (held_here(fd)) {
        // This process's own lock: its holder's writes to make, no other output's (another simulation's).
        // (Also the run a Python callback is called from: what holds the lock may be that run, not another.)
        if (!writes_for(s))
          problem = "is being written by a run of this process now (the run a callback is called from, or another "
                    "simulation's, which holds " + lock_path + "); wait for it to end, or name another file";
      } else if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {  // another process's exclusive lock (or none on this system)
        if (errno == EWOULDBLOCK) {
          settled = attempt + 1 == kLockAttempts;  // one held for a moment is waited out
          if (settled) problem = being_written(holder_of(fd), lock_path);
        }
      } else {
        settled = names_the_file(lock_path, fd);  // shown free: a holder may have let go and unnamed it
      }
    }
    ::close(fd);  // and with it the shared lock, where one was taken
    if (settled) return problem;
  }
  return "";
}

// Why PATH is no output now because a program holds it open under an exclusive file lock, or "". Only a regular file
// is opened (read-only, non-blocking: a FIFO put at the name meanwhile cannot hold the check up).
std::string held_open_to_write(const std::string& path) {
  int const fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat s {};
  bool held = false;
  if (::fstat(fd, &s) == 0 && S_ISREG(s.st_mode)) {
    // One held for a moment (a reader's check, a writer letting go) is waited out.
    for (int attempt = 0; attempt < kLockAttempts; ++attempt) {
      if (attempt) std::this_thread::sleep_for(kLockRetry);
      held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      if (!held) break;
    }
  }
  ::close(fd);  // and with it the shared lock, where one was taken
  if (!held) return "";
  return "is held open to be written now (under an exclusive file lock: another run's diagnostics series, or HDF5's, "
         "h5py's mode 'a' say, in this process or another); close it there first, or name another file";
}

}  // namespace

std::optional<std::string> series_lock_name_of(const std::string& path) {
  fs::path const p(path);
  std::string const name = p.filename().string();
  std::size_t const dot = name.find_last_of('.');
  std::size_t const end = dot == std::string::npos || dot == 0 ? name.size() : dot;  // ".h5" alone is no ending
  std::size_t first = end;
  while (first > 0 && std::isdigit(static_cast<unsigned char>(name[first - 1]))) --first;
  if (end - first < 8 || first == 0 || name[first - 1] != '_') return std::nullopt;
  std::string ending = name.substr(end);
  if (ending == ".hdf5") ending = ".h5";
  return (p.parent_path() / (name.substr(0, first) + "########" + ending)).string();
}

std::string another_writer_of(const std::string& path) {
  if (std::string problem = writer_by_lock(path); !problem.empty()) return problem;
  if (auto const series = series_lock_name_of(path))
    if (std::string problem = writer_by_lock(*series); !problem.empty()) return problem;
  return held_open_to_write(path);
}

void write_bytes_file(const std::string& path, std::string_view bytes, const std::string& what) {
  write_file_atomically(
      path, what,
      [&](const std::string& tmp) {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        f.flush();
        return bool(f);
      },
      [&](const std::string& tmp) {
        // Compared in chunks, as the system holds the file after its fsync.
        errno = 0;
        std::ifstream in(tmp, std::ios::binary);
        if (!in)
          throw RuntimeFailure(path + ": cannot write " + what + ": the file written cannot be read back (" +
                               (errno ? error_text(errno) : std::string("it cannot be opened")) +
                               "); nothing was replaced");
        std::vector<char> chunk(std::size_t(1) << 20);
        std::size_t at = 0;
        bool same = true;
        while (same && at < bytes.size()) {
          std::size_t const want = std::min(chunk.size(), bytes.size() - at);
          in.read(chunk.data(), static_cast<std::streamsize>(want));
          same = std::size_t(in.gcount()) == want && std::memcmp(chunk.data(), bytes.data() + at, want) == 0;
          at += want;
        }
        same = same && in.peek() == std::ifstream::traits_type::eof();
        if (!same)
          throw RuntimeFailure(path + ": cannot write " + what + ": the file read back differs from what was " +
                               "written; the disk may be full or failing (nothing was replaced)");
      });
}

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  write_bytes_file(path, text, what);
}

void sync_folder(const std::string& path, const std::string& what) {
  std::string folder = fs::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  int const fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  int const rc = ::fsync(fd);
  int const err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL && err != EROFS) {  // EINVAL: a file system that cannot sync folders
    throw RuntimeFailure(path + ": " + what + " written, but the folder " + folder + " could not be synced: " +
                         error_text(err));
  }
}

}  // namespace nbody
