// tests/read_error_preload.cpp - a failing disk, injected for tests (LD_PRELOAD). Every call not named here is the C
// library's:
//  - pread(2) of the file named by NBODY_TEST_EIO_FILE fails with EIO at offsets at or past NBODY_TEST_EIO_FROM
//    (default 0), as a failing disk's sectors do (HDF5 reads files with pread);
//  - write(2), writev(2) and pwrite(2) to a file whose path holds NBODY_TEST_LOST_WRITE say they wrote everything and
//    write nothing, as a disk that loses writes does: those of at least NBODY_TEST_LOST_WRITE_MIN bytes (default 0;
//    HDF5 writes a dataset's values in one call, its structures in small ones);
//  - fsync(2) of the folder NBODY_TEST_FSYNC_EIO_DIR fails with EIO.
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <sys/uio.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

bool failing(int fd, off_t offset) {
  const char* path = std::getenv("NBODY_TEST_EIO_FILE");
  if (!path) return false;
  struct stat want {}, have {};
  if (stat(path, &want) != 0 || fstat(fd, &have) != 0) return false;
  const char* from = std::getenv("NBODY_TEST_EIO_FROM");
  return want.st_dev == have.st_dev && want.st_ino == have.st_ino && offset >= (from ? std::atoll(from) : 0);
}

std::string path_of(int fd) {
  char link[64], path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t const n = readlink(link, path, sizeof path - 1);
  return n > 0 ? std::string(path, std::size_t(n)) : std::string();
}

bool loses_writes(int fd, std::size_t bytes) {
  const char* part = std::getenv("NBODY_TEST_LOST_WRITE");
  if (!part || !*part) return false;
  const char* least = std::getenv("NBODY_TEST_LOST_WRITE_MIN");
  return bytes >= std::size_t(least ? std::atoll(least) : 0) && path_of(fd).find(part) != std::string::npos;
}

bool fails_sync(int fd) {
  const char* folder = std::getenv("NBODY_TEST_FSYNC_EIO_DIR");
  if (!folder) return false;
  struct stat want {}, have {};
  return stat(folder, &want) == 0 && fstat(fd, &have) == 0 && S_ISDIR(have.st_mode) && want.st_dev == have.st_dev &&
         want.st_ino == have.st_ino;
}

}  // namespace

extern "C" ssize_t write(int fd, const void* buf, size_t count) {
  using Write = ssize_t (*)(int, const void*, size_t);
  static Write const real = reinterpret_cast<Write>(dlsym(RTLD_NEXT, "write"));
  if (loses_writes(fd, count)) return ssize_t(count);
  return real(fd, buf, count);
}

extern "C" ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  using Pwrite = ssize_t (*)(int, const void*, size_t, off_t);
  static Pwrite const real = reinterpret_cast<Pwrite>(dlsym(RTLD_NEXT, "pwrite"));
  if (loses_writes(fd, count)) return ssize_t(count);
  return real(fd, buf, count, offset);
}

extern "C" ssize_t writev(int fd, const struct iovec* iov, int count) {
  using Writev = ssize_t (*)(int, const struct iovec*, int);
  static Writev const real = reinterpret_cast<Writev>(dlsym(RTLD_NEXT, "writev"));
  std::size_t total = 0;
  for (int k = 0; k < count; ++k) total += iov[k].iov_len;
  if (loses_writes(fd, total)) return ssize_t(total);
  return real(fd, iov, count);
}

extern "C" int fsync(int fd) {
  using Fsync = int (*)(int);
  static Fsync const real = reinterpret_cast<Fsync>(dlsym(RTLD_NEXT, "fsync"));
  if (fails_sync(fd)) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}

extern "C" ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  using Pread = ssize_t (*)(int, void*, size_t, off_t);
  static Pread const real = reinterpret_cast<Pread>(dlsym(RTLD_NEXT, "pread"));
  if (failing(fd, offset)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count, offset);
}
