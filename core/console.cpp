// core/console.cpp - stdout and stderr (and the C++ streams over them) as glibc cookie streams whose writes give up
// on a stalled console once an interrupt is recorded.
#include "core/console.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ext/stdio_sync_filebuf.h>
#include <iostream>

#include "core/interrupt.h"

namespace nbody {
namespace {

int out_fd = STDOUT_FILENO, err_fd = STDERR_FILENO;
std::atomic<int> first_error{0};  // the errno of the first write that failed (report_written names it)

// After an interrupt, how long a write waits for the console before what is left of it is dropped: long enough for a
// console that is merely slow (a line is not torn), short against a stalled one.
constexpr int kInterruptedWaitMilliseconds = 200;

// Whether the console `fd` takes a write within `milliseconds` (POLLERR, POLLHUP: the write then says why).
bool takes(int fd, int milliseconds) {
  pollfd p{fd, POLLOUT, 0};
  return ::poll(&p, 1, milliseconds) == 1 && (p.revents & (POLLOUT | POLLERR | POLLHUP)) != 0;
}

// glibc's cookie write: the bytes written, 0 on an error (never negative: glibc reads it as a size), errno kept.
ssize_t write_console(void* cookie, const char* data, std::size_t size) {
  int const fd = *static_cast<int*>(cookie);
  std::size_t done = 0;
  while (done < size) {
    // Interrupted: what the console does not take soon is dropped, so that the interrupted work goes on to its files.
    if (interrupt_signal() != 0 && !takes(fd, kInterruptedWaitMilliseconds)) return ssize_t(size);
    ssize_t const n = ::write(fd, data + done, size - done);
    if (n > 0) {
      done += std::size_t(n);
    } else if (n < 0 && errno != EINTR) {  // EINTR: a signal ended the wait; looked at above
      int expected = 0;
      first_error.compare_exchange_strong(expected, errno);
      return ssize_t(done);
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
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  // glibc's stdout and stderr are plain variables, made to be set (its manual, "Standard Streams"); the C++ streams
  // were bound to the FILEs they held, and are bound to the new ones, so that both kinds of writes share one order.
  FILE* const out = console(&out_fd, _IOLBF);
  FILE* const err = console(&err_fd, _IONBF);
  if (!out || !err) return;
  stdout = out;
  stderr = err;
  // Never destroyed: the streams flush through them at exit, after the function-local statics would be gone.
  auto* const out_buffer = new __gnu_cxx::stdio_sync_filebuf<char>(out);
  auto* const err_buffer = new __gnu_cxx::stdio_sync_filebuf<char>(err);
  std::cout.rdbuf(out_buffer);
  std::cerr.rdbuf(err_buffer);
  std::clog.rdbuf(err_buffer);
}

int console_error() { return first_error.load(); }

std::string one_line(const std::string& text) {
  std::string line;
  for (char c : text) {
    auto const byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else if (c == '\t') {
      line += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      line += escaped;
    } else {
      line += c;
    }
  }
  return line;
}

}  // namespace nbody
