// core/console.cpp - stdout and stderr as glibc cookie streams whose writes give up on a stalled console once an
// interrupt is recorded.
#include "core/console.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "core/interrupt.h"

namespace nbody {
namespace {

int out_fd = STDOUT_FILENO, err_fd = STDERR_FILENO;

// Whether the console `fd` takes a write now.
bool takes_now(int fd) {
  pollfd p{fd, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLOUT | POLLERR | POLLHUP)) != 0;
}

ssize_t write_console(void* cookie, const char* data, std::size_t size) {
  int const fd = *static_cast<int*>(cookie);
  std::size_t done = 0;
  while (done < size) {
    // Interrupted: the rest is dropped where the console takes nothing now (POLLERR, POLLHUP: the write says why).
    if (interrupt_signal() != 0 && !takes_now(fd)) return ssize_t(size);
    ssize_t const n = ::write(fd, data + done, size - done);
    if (n > 0) {
      done += std::size_t(n);
    } else if (n < 0 && errno != EINTR) {  // EINTR: a signal ended the wait; looked at above
      return done > 0 ? ssize_t(done) : -1;
    }
  }
  return ssize_t(size);
}

FILE* console(int* fd, int buffering) {
  cookie_io_functions_t const io{nullptr, write_console, nullptr, nullptr};
  FILE* f = ::fopencookie(fd, "w", io);
  if (f) std::setvbuf(f, nullptr, buffering, 0);
  return f;
}

}  // namespace

void make_console_interruptible() {
  std::fflush(stdout);
  std::fflush(stderr);
  // glibc's stdout and stderr are plain variables, made to be set (its manual, "Standard Streams").
  if (FILE* out = console(&out_fd, _IOLBF)) stdout = out;
  if (FILE* err = console(&err_fd, _IONBF)) stderr = err;
}

}  // namespace nbody
