// core/output_path.cpp - the refusals of output paths (lstat, stat, access only) and the same-file check.
#include "core/output_path.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/atomic_file.h"
#include "core/errors.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;

std::string error_text(int err) { return std::generic_category().message(err); }

// The folder that holds PATH, as the user wrote it: "." for a bare file name.
std::string folder_of(const std::string& path) {
  std::string const parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// What an existing PATH (lstat'ed into `target`) is, when nbody must not replace it; "" for a regular
// file the user may write.
std::string target_problem(const std::string& path, const struct stat& target) {
  mode_t const mode = target.st_mode;
  if (S_ISLNK(mode)) {
    std::error_code ec;
    fs::path const to = fs::read_symlink(path, ec);
    return "is a symbolic link" + (ec ? std::string() : " (to " + to.string() + ")") +
           "; nbody replaces only regular files: name the file itself";
  }
  if (S_ISDIR(mode)) return "is a directory; name a file in it";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (!S_ISREG(mode)) return "is not a regular file";
  // A file no one may write (chmod a-w: results protected on purpose) is kept even from root, which access() lets
  // write any file (a container's usual user).
  if ((mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", unsigned(mode & 07777));
    return std::string("is read-only (mode ") + octal + "); nbody does not replace a write-protected file";
  }
  // Effective ids, as open() would use them.
  if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
    int const err = errno;
    if (err == EROFS) return "is on a read-only file system";
    return "is read-only (" + error_text(err) + "); nbody does not replace a file you may not write";
  }
  return {};
}

// Why the folder of PATH cannot receive a new file (a temporary one, then renamed), or "".
std::string folder_problem(const std::string& folder) {
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0) {
    int const err = errno;
    if (err == ENOENT) return "the folder " + folder + " does not exist";
    if (err == ENOTDIR) return "the folder " + folder + " does not exist (a part of its path is a file)";
    return "the folder " + folder + ": " + error_text(err);
  }
  if (!S_ISDIR(dir.st_mode)) return folder + " is not a folder";
  // The kernel's own file systems let root pass the access check below but make no file there: the write would
  // fail only at the run's end, its output lost.
  struct statfs system {};
  if (::statfs(folder.c_str(), &system) == 0) {
    const char* kernel = nullptr;
    switch (static_cast<unsigned long>(system.f_type)) {
      case PROC_SUPER_MAGIC: kernel = "proc"; break;
      case SYSFS_MAGIC: kernel = "sysfs"; break;
      case CGROUP_SUPER_MAGIC: kernel = "cgroup"; break;
      case CGROUP2_SUPER_MAGIC: kernel = "cgroup2"; break;
      case DEBUGFS_MAGIC: kernel = "debugfs"; break;
      case DEVPTS_SUPER_MAGIC: kernel = "devpts"; break;
      default: break;
    }
    if (kernel) return "the folder " + folder + " is on the kernel's " + kernel + " file system, which holds no files";
  }
  if (::faccessat(AT_FDCWD, folder.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
    int const err = errno;
    if (err == EROFS) return "the folder " + folder + " is on a read-only file system";
    return "the folder " + folder + " is not writable (" + error_text(err) + ")";
  }
  return {};
}

// One spelling per file: symlinks resolved, "." and ".." removed, relative paths made absolute.
fs::path same_file_key(const std::string& path) {
  std::error_code ec;
  // Absolute first: weakly_canonical leaves a relative path none of whose parts exist as it is.
  fs::path const absolute = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal();
  fs::path const canonical = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute : canonical).lexically_normal();
}

}  // namespace

std::string path_name_problem(const std::string& path, bool folder) {
  std::string const kind = folder ? "folder" : "file";
  if (path.empty()) return "the path is empty; name a " + kind;
  if (path == "-")
    return "nbody reads and writes files, not standard input or output; name a " + kind + " (./- for one named '-')";
  // A blank left between quotes (--snapshots ' '): no listing shows the name.
  std::string const name = fs::path(path).filename().string();
  if (!name.empty() && name.find_first_not_of(" \t") == std::string::npos)
    return "the name is blank; name a " + kind;
  return {};
}

std::string name_length_problem(const std::string& path, bool keep_extension, std::size_t longer) {
  // The hidden temporary file beside it (temporary_name), the longest name an output makes; its lock (".NAME.lock")
  // is shorter. Files named after it (`longer` bytes more: a series' step) have theirs.
  std::size_t const longest = fs::path(temporary_name(path, keep_extension)).filename().string().size() + longer;
  errno = 0;
  long limit = ::pathconf(folder_of(path).c_str(), _PC_NAME_MAX);
  if (limit < 0 && errno == 0) return {};  // no limit
  if (limit <= 0) limit = NAME_MAX;        // a folder not there yet is said by the folder check
  if (longest <= std::size_t(limit)) return {};
  return "the name is too long: nbody writes through hidden temporary files beside it, whose names are up to " +
         std::to_string(longest) + " bytes, over the " + std::to_string(limit) +
         " this file system allows; give a name at least " + std::to_string(longest - std::size_t(limit)) +
         (longest - std::size_t(limit) == 1 ? " byte" : " bytes") + " shorter";
}

std::string output_path_problem(const std::string& path, std::size_t longer) {
  if (auto problem = path_name_problem(path); !problem.empty()) return problem;
  // Names a slip makes (a blank left between quotes, a newline pasted into a job script), which no listing shows as
  // they are: not written. (Files of such names are still read.)
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return "the name holds a control character (a newline or a tab, say); name a file without one";
  if (path.back() == '/') return "ends in '/': name a file, not a folder";
  // ".NAME.lock": the lock a writer of NAME holds beside it (WriterLock), made and removed by nbody.
  if (std::string const name = fs::path(path).filename().string();
      name.size() > 6 && name.front() == '.' && name.compare(name.size() - 5, 5, ".lock") == 0)
    return "names like ." + name.substr(1, name.size() - 6) + ".lock are the locks nbody's writers hold beside their "
           "files (" + name.substr(1, name.size() - 6) + "'s), made and removed by nbody; name another file";
  struct stat target {};
  if (::lstat(path.c_str(), &target) == 0) {
    if (auto problem = target_problem(path, target); !problem.empty()) return problem;
  } else if (errno != ENOENT && errno != ENOTDIR) {  // those two: the folder check below says which part
    int const err = errno;
    if (err == EACCES) return "the folder " + folder_of(path) + " cannot be searched (" + error_text(err) + ")";
    if (err == ENAMETOOLONG)  // the name itself over the limit (not the whole path): how much
      if (auto problem = name_length_problem(path, false, longer); !problem.empty()) return problem;
    return error_text(err);  // a name too long, a loop of links
  }
  if (auto problem = folder_problem(folder_of(path)); !problem.empty()) return problem;
  if (auto problem = name_length_problem(path, false, longer); !problem.empty()) return problem;
  return another_writer_of(path);
}

void check_output_path(const std::string& path, const std::string& option, const SettingNames& names,
                       std::size_t longer) {
  if (auto const problem = output_path_problem(path, longer); !problem.empty())
    throw InputError(names.with_text(option, path) + ": " + problem);
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    auto const& [first_option, first_path] = outputs[i];
    if (first_path.empty()) continue;
    fs::path const first_key = same_file_key(first_path);
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      auto const& [option, path] = outputs[j];
      if (path.empty()) continue;
      std::error_code ec;
      // Spellings first; then two existing names of one inode (hard links).
      if (same_file_key(path) == first_key || fs::equivalent(first_path, path, ec)) {
        throw InputError(first_option + " and " + option + " both name " + first_path +
                         "; give each output its own file");
      }
    }
  }
}

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

void check_outputs_spare_input(const std::vector<std::pair<std::string, std::string>>& outputs,
                               const std::string& input_option, const std::string& input, const std::string& continues) {
  if (input.empty()) return;
  fs::path const input_key = same_file_key(input);
  for (auto const& [option, path] : outputs) {
    if (path.empty() || option == continues) continue;
    std::error_code ec;
    if (same_file_key(path) == input_key || fs::equivalent(input, path, ec))
      throw InputError(option + " " + path + ": the " + input_option +
                       " file; writing it would replace the file this run starts from; give " + option +
                       " another file");
  }
}

}  // namespace nbody
