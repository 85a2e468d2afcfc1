// tests/read_error_preload.cpp - a read error of the disk, injected for tests (LD_PRELOAD): pread(2) of the file named
// by NBODY_TEST_EIO_FILE fails with EIO at offsets at or past NBODY_TEST_EIO_FROM (default 0), as a failing disk's
// sectors do. Every other call is the C library's. (HDF5 reads files with pread.)
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace {

bool failing(int fd, off_t offset) {
  const char* path = std::getenv("NBODY_TEST_EIO_FILE");
  if (!path) return false;
  struct stat want {}, have {};
  if (stat(path, &want) != 0 || fstat(fd, &have) != 0) return false;
  const char* from = std::getenv("NBODY_TEST_EIO_FROM");
  return want.st_dev == have.st_dev && want.st_ino == have.st_ino && offset >= (from ? std::atoll(from) : 0);
}

}  // namespace

extern "C" ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  using Pread = ssize_t (*)(int, void*, size_t, off_t);
  static Pread const real = reinterpret_cast<Pread>(dlsym(RTLD_NEXT, "pread"));
  if (failing(fd, offset)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count, offset);
}
