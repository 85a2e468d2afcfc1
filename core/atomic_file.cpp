// core/atomic_file.cpp - a unique temporary file beside the target, fsync, rename, fsync of the folder.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <system_error>

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


// Makes the rename durable. A folder the user may not read cannot be opened to be synced: then the
// rename is left to the file system's own schedule, as most programs leave every rename.
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

// Whether the name `path` holds the file open as `fd` (no other file has taken the name since).
bool names_the_file(const std::string& path, int fd) {
  struct stat open_file {}, named {};
  return ::fstat(fd, &open_file) == 0 && ::lstat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

}  // namespace

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

WriterLock::WriterLock(const std::string& path, const std::string& given)
    : path_((fs::path(path).parent_path() / ("." + fs::path(path).filename().string() + ".lock")).string()) {
  // The lock is the file's that the name holds once it is taken: a holder that let go removed the name (a new
  // file may have taken it since), and then the lock taken was on a file no other writer will find.
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EACCES) fd = ::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);  // another user's
    if (fd < 0) {
      why_not_ = "cannot open it: " + error_text(errno);
      break;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int const err = errno;
      std::string holder;
      char text[256] = {};
      ssize_t const n = ::pread(fd, text, sizeof text - 1, 0);
      ::close(fd);
      if (err != EWOULDBLOCK) {  // no locks on this file system
        why_not_ = "cannot lock it: " + error_text(err);
        break;
      }
      holder.assign(text, n > 0 ? std::size_t(n) : 0);
      while (!holder.empty() && std::isspace(static_cast<unsigned char>(holder.back()))) holder.pop_back();
      unsigned long pid = 0;
      char host[200] = {};
      std::string who = "another process";
      if (std::sscanf(holder.c_str(), "%lu %199s", &pid, host) == 2) {
        char here[256] = {};
        ::gethostname(here, sizeof here - 1);
        who = pid == static_cast<unsigned long>(::getpid()) && std::string(host) == here
                  ? "another simulation of this process"
                  : "process " + std::to_string(pid) + " on " + host;
      }
      throw InputError(given + " is being written by another run now (" + who + ", which holds " + path_ +
                       "); wait for it to end, or name another file");
    }
    if (names_the_file(path_, fd)) {
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      std::string const text = std::to_string(::getpid()) + " " + (host[0] ? host : "localhost") + "\n";
      if (::ftruncate(fd, 0) == 0) static_cast<void>(::pwrite(fd, text.data(), text.size(), 0));
      fd_ = fd;
      removed_at_exit_.emplace(path_);
      return;
    }
    ::close(fd);
  }
  if (why_not_.empty()) why_not_ = "its name kept changing";
}

WriterLock::~WriterLock() {
  if (fd_ < 0) return;
  removed_at_exit_.reset();  // from here on the name may soon be another writer's
  // Removed before the lock goes, so that a writer waiting on this file finds it unnamed and tries again; only while
  // the name still holds it (a file removed from outside may have been replaced by another writer's since).
  if (names_the_file(path_, fd_)) ::unlink(path_.c_str());
  ::close(fd_);
}

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  write_file_atomically(path, what, [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    f.flush();
    return bool(f);
  });
}

}  // namespace nbody
