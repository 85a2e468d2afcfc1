// render/video_encoder.cpp - ffmpeg started with posix_spawn, raw frames on its stdin, its stderr in memory, a temporary file renamed into place.
#include "render/video_encoder.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_path.h"

extern char** environ;  // the environment ffmpeg inherits (declared by no standard header)

namespace nbody::render {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxSide = 16384;      // pixels; far above any screen, and width * height * 3 fits easily
constexpr double kMaxFps = 1000.0;   // frames per second
constexpr const char* kOption = "--video";

std::string error_text(int err) { return std::generic_category().message(err); }

// A file descriptor, closed with its owner.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// The ffmpeg process: killed (SIGKILL: nothing it would still write is wanted) and reaped with its
// owner unless wait() reaped it, so that no zombie is left behind.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  ChildProcess(ChildProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      static_cast<void>(wait());
    }
  }
  // Waits for the process to end: its wait status, or -1 when it cannot be had (SIGCHLD ignored); nothing where
  // `stalled()` says, between looks 20 ms apart, that it is taking too long (the process is left to the destructor).
  template <class Stalled>
  std::optional<int> wait_unless(Stalled stalled) {
    for (;;) {
      int status = 0;
      pid_t const rc = ::waitpid(pid_, &status, WNOHANG);
      if (rc == pid_ || (rc < 0 && errno != EINTR)) {
        pid_ = -1;
        return rc < 0 ? -1 : status;
      }
      if (stalled()) return std::nullopt;
      struct timespec const pause {0, 20'000'000};
      ::nanosleep(&pause, nullptr);
    }
  }
  pid_t pid() const { return pid_; }
  int wait() {
    int status = 0;
    pid_t rc;
    do {
      rc = ::waitpid(pid_, &status, 0);
    } while (rc < 0 && errno == EINTR);  // Ctrl-C (nbody's handlers use no SA_RESTART): wait on
    pid_ = -1;
    return rc < 0 ? -1 : status;
  }

 private:
  pid_t pid_;
};

// What a wait status says, for a message: "exit status 1", "killed by signal 9 (Killed)".
std::string describe_status(int status) {
  if (status == -1) return "exit status unknown";
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  }
  return "wait status " + std::to_string(status);
}

// The last line ffmpeg wrote to its stderr (a memory file), trimmed, or the last that names a cause the system gave;
// a placeholder when it wrote none.
std::string last_line_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return "(ffmpeg wrote no message)";
  constexpr off_t kTail = 4096;  // bytes: more than any one line of ffmpeg's
  off_t const start = std::max<off_t>(0, st.st_size - kTail);
  std::string text(std::size_t(st.st_size - start), '\0');
  ssize_t const n = ::pread(fd, text.data(), text.size(), start);
  text.resize(n > 0 ? std::size_t(n) : 0);
  // ffmpeg ends progress lines with '\r': either ends a line.
  std::replace(text.begin(), text.end(), '\r', '\n');
  std::size_t const last = text.find_last_not_of(" \t\n");
  if (last == std::string::npos) return "(ffmpeg wrote no message)";
  // The cause where a line names one the system gave (a full disk), which ffmpeg's last line ("Error initializing
  // output stream") does not.
  for (const char* cause : {"No space left on device", "Disk quota exceeded", "File too large", "Input/output error"}) {
    std::size_t const at = text.rfind(cause, last);
    if (at == std::string::npos) continue;
    std::size_t const begin = text.find_last_of('\n', at), end = text.find('\n', at);
    std::size_t const from = begin == std::string::npos ? 0 : begin + 1;
    return text.substr(from, (end == std::string::npos ? text.size() : end) - from);
  }
  std::size_t const newline = text.find_last_of('\n', last);
  std::size_t const first = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(first, last + 1 - first);
}

// PROGRAM's path as execvp would find it on PATH, or "" when it is on none of its folders.
std::string find_on_path(const std::string& program) {
  char const* env = std::getenv("PATH");
  std::string const path = env ? env : "/bin:/usr/bin";  // glibc's default when PATH is unset
  std::size_t begin = 0;
  while (begin <= path.size()) {
    std::size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string folder = path.substr(begin, end - begin);
    if (folder.empty()) folder = ".";  // an empty entry is the current folder (POSIX)
    std::string const candidate = folder + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    begin = end + 1;
  }
  return {};
}


// Frames per second as ffmpeg reads them ("15", "29.97"): it turns the decimal into a fraction.
std::string rate_text(double fps) {
  std::ostringstream s;
  s.precision(10);
  s << fps;
  return s.str();
}

// Starts PROGRAM with ARGS (argv[0] first): stdin from `stdin_fd`, stdout to /dev/null, stderr to
// `stderr_fd`, every other descriptor closed, default signal handling, an empty signal mask and a
// process group of its own. Throws RuntimeFailure when it cannot be started.
pid_t spawn(const std::string& path, const std::string& program, const std::vector<std::string>& args,
            int stdin_fd, int stderr_fd) {
  std::vector<char*> argv;
  for (auto const& a : args) argv.push_back(const_cast<char*>(a.c_str()));  // posix_spawn's signature; not written
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);  // dup2 clears O_CLOEXEC on the copy
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Descriptors that other code opened without O_CLOEXEC too (ours all have it).
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
  // Signals: nbody may ignore or block some; exec keeps an ignored signal ignored and the mask as it
  // is, so both are reset. Own process group: a Ctrl-C at the terminal would otherwise make ffmpeg
  // close the video while nbody still means to finish it.
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);

  pid_t pid = -1;
  int const err = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (err != 0) {
    throw RuntimeFailure(std::string(kOption) + " " + path + ": cannot start " + program + ": " + error_text(err));
  }
  return pid;
}

// The CPU time a process has used (user and system, every thread, in clock ticks: /proc/PID/stat), or -1 where it
// cannot be read. An ffmpeg at work (its lookahead's frames, a large frame) uses CPU while it takes no input and
// writes nothing; a stalled or stopped one uses none.
long long cpu_ticks(pid_t pid) {
  if (pid <= 0) return -1;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "re");
  if (!f) return -1;
  char text[1024];
  std::size_t const n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  text[n] = '\0';
  char const* at = std::strrchr(text, ')');  // after the command name, which may hold spaces
  if (!at) return -1;
  unsigned long long utime = 0, stime = 0;
  // state, ppid, pgrp, session, tty, tpgid, flags, minflt, cminflt, majflt, cmajflt, utime, stime
  if (std::sscanf(at + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return -1;
  return static_cast<long long>(utime + stime);
}

// Writes all of `data` to a pipe opened non-blocking: 0, or the errno of the write that failed (EPIPE: the reader is
// gone), or ETIMEDOUT where the reader (process `reader`) took no byte and used no CPU for `stall_seconds` (after a
// signal: kInterruptedStallSeconds; ECANCELED then). SIGPIPE is blocked in this thread for the write, and one that the write raised is taken off the
// pending set before the mask is restored, so a dead reader is an error code, never a signal that would end nbody. A
// SIGPIPE pending before the call (raised elsewhere) is left pending.
int write_without_sigpipe(int fd, const std::uint8_t* data, std::size_t size, double stall_seconds, pid_t reader) {
  sigset_t pipe_only, old_mask, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigemptyset(&pending);
  sigpending(&pending);
  bool const already_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  int err = 0;
  auto progress = Clock::now();
  long long cpu = cpu_ticks(reader);
  while (size > 0) {
    ssize_t const n = ::write(fd, data, size);
    if (n > 0) {
      data += n;
      size -= std::size_t(n);
      progress = Clock::now();
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      err = errno;
      break;
    }
    // Full: ffmpeg is encoding (it uses CPU), or stalled. A signal lets the frame finish while ffmpeg works (nbody
    // stops at its next safe point, after this frame), not while it does nothing.
    if (long long const now = cpu_ticks(reader); now != cpu) {
      cpu = now;
      progress = Clock::now();
    }
    bool const signalled = interrupt_signal() != 0;
    if (seconds_since(progress) > (signalled ? VideoEncoder::kInterruptedStallSeconds : stall_seconds)) {
      err = signalled ? ECANCELED : ETIMEDOUT;
      break;
    }
    struct pollfd writable {fd, POLLOUT, 0};
    static_cast<void>(::poll(&writable, 1, 100));  // a look at the clocks and signals every 100 ms at least
  }
  if (err == EPIPE && !already_pending) {
    struct timespec const no_wait {};
    while (::sigtimedwait(&pipe_only, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return err;
}

// Big-endian unsigned integers of an MP4 box header.
std::uint64_t big_endian(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
  return v;
}

// The sample count of the first sample size table ('stsz') among the boxes of `data` (a container's contents), looked
// for inside the containers that lead to it (trak, mdia, minf, stbl); none when there is none.
std::optional<std::uint64_t> sample_count(const unsigned char* data, std::uint64_t size) {
  for (std::uint64_t at = 0; at + 8 <= size;) {
    std::uint64_t length = big_endian(data + at, 4), header = 8;
    std::string const type(reinterpret_cast<const char*>(data + at + 4), 4);
    if (length == 1 && at + 16 <= size) length = big_endian(data + at + 8, 8), header = 16;
    if (length < header || length > size - at) return std::nullopt;
    if (type == "stsz" && length >= header + 12) return big_endian(data + at + header + 8, 4);
    if (type == "trak" || type == "mdia" || type == "minf" || type == "stbl")
      if (auto const n = sample_count(data + at + header, length - header)) return n;
    at += length;
  }
  return std::nullopt;
}

// What is wrong with the MP4 file `fd` as ffmpeg left it, or "": its top-level boxes must tile the file exactly
// (ffmpeg exits with 0 after a disk that filled while it moved the index to the front, and leaves a file cut short),
// with the frames (mdat) and the index (moov), whose video track holds `frames` samples.
std::string mp4_problem(int fd, std::uint64_t frames) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "cannot read its size: " + error_text(errno);
  std::uint64_t const size = std::uint64_t(st.st_size);
  std::vector<unsigned char> index;
  bool data = false;
  for (std::uint64_t at = 0; at < size;) {
    unsigned char h[16];
    std::uint64_t const can = std::min<std::uint64_t>(16, size - at);
    if (can < 8 || ::pread(fd, h, can, off_t(at)) != ssize_t(can))
      return "a box at byte " + std::to_string(at) + " of " + std::to_string(size) + " cannot be read whole";
    std::uint64_t length = big_endian(h, 4), header = 8;
    std::string const type(reinterpret_cast<const char*>(h + 4), 4);
    if (length == 1 && can == 16) length = big_endian(h + 8, 8), header = 16;
    if (length == 0) length = size - at;  // to the end of the file
    if (length < header || length > size - at)
      return "its " + type + " box at byte " + std::to_string(at) + " runs past its end, byte " + std::to_string(size);
    if (type == "moov") {
      if (length - header > (std::uint64_t(1) << 30)) return "its index is larger than 1 GiB";
      index.resize(std::size_t(length - header));
      if (::pread(fd, index.data(), index.size(), off_t(at + header)) != ssize_t(index.size()))
        return "its index cannot be read";
    }
    data = data || type == "mdat";
    at += length;
  }
  if (size == 0) return "it is empty";
  if (!data) return "it holds no frames (no mdat box)";
  if (index.empty()) return "it has no index (no moov box)";
  std::optional<std::uint64_t> const samples = sample_count(index.data(), index.size());
  if (frames == 0 && !samples) return {};  // ffmpeg writes no track for no frames
  if (!samples) return "its index has no sample table";
  if (*samples != frames)
    return "its index holds " + std::to_string(*samples) + " frames of the " + std::to_string(frames) + " given";
  return {};
}

}  // namespace

// Declared in the order of creation; destroyed in reverse: ffmpeg killed and reaped first, then its
// pipe and log closed, the temporary file removed last (unless moved into place).
struct VideoEncoder::Session {
  TemporaryFile output;
  UniqueFd log;     // ffmpeg's stderr: a memory file (memfd), read back for the message of a failure
  UniqueFd input;   // the write end of ffmpeg's stdin
  ChildProcess ffmpeg;
};

VideoEncoder::VideoEncoder(const std::string& path, int width, int height, double fps, double stall_seconds)
    : path_(path), width_(width), height_(height), stall_seconds_(stall_seconds) {
  std::string const where = std::string(kOption) + " " + path + ": ";
  if (width < 1 || width > kMaxSide || height < 1 || height > kMaxSide) {
    throw InputError(where + "frame size " + std::to_string(width) + " x " + std::to_string(height) +
                     ": width and height must be 1 to " + std::to_string(kMaxSide) + " pixels");
  }
  if (!(fps > 0 && fps <= kMaxFps)) {
    throw InputError(where + rate_text(fps) + " frames per second: must be above 0 and at most " +
                     rate_text(kMaxFps));
  }
  check_output_path(path, kOption);
  if (std::string const problem = name_length_problem(path, true); !problem.empty())  // its temporary keeps ".mp4"
    throw InputError(where + problem);
  std::string const ffmpeg = find_on_path("ffmpeg");
  if (ffmpeg.empty()) throw InputError(where + "ffmpeg not found on PATH; install it (Debian: ffmpeg)");

  TemporaryFile output(path, std::string(kOption) + " " + path, true);  // ffmpeg goes by the extension
  UniqueFd log(::memfd_create("nbody-ffmpeg-stderr", MFD_CLOEXEC));
  if (log.get() < 0) throw RuntimeFailure(where + "cannot create a memory file for ffmpeg's messages: " + error_text(errno));
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw RuntimeFailure(where + "cannot create a pipe to ffmpeg: " + error_text(errno));
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  // Ours alone non-blocking (ffmpeg's end is another open file): a write to a full pipe returns, and waits in poll().
  if (::fcntl(write_end.get(), F_SETFL, ::fcntl(write_end.get(), F_GETFL) | O_NONBLOCK) != 0)
    throw RuntimeFailure(where + "cannot set up the pipe to ffmpeg: " + error_text(errno));

  std::vector<std::string> args = {
      "ffmpeg", "-hide_banner", "-nostats", "-loglevel", "error",
      "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", std::to_string(width) + "x" + std::to_string(height),
      "-r", rate_text(fps), "-i", "-"};
  if (encoded_width() != width || encoded_height() != height) {  // libx264 with yuv420p needs even sizes
    args.insert(args.end(), {"-vf", "pad=" + std::to_string(encoded_width()) + ":" + std::to_string(encoded_height()) +
                                        ":0:0:black"});
  }
  // "file:" so that a name with a colon ("a:b.mp4") is not taken for a protocol; -y because the
  // temporary file exists (created above, to own the name); -f mp4 whatever the extension.
  args.insert(args.end(), {"-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart", "-f", "mp4", "-y",
                           "file:" + output.path()});
  ChildProcess child(spawn(path, ffmpeg, args, read_end.get(), log.get()));
  read_end.reset();  // ffmpeg's now: it sees the end of its input when write_end closes
  session_.reset(new Session{std::move(output), std::move(log), std::move(write_end), std::move(child)});
}

VideoEncoder::~VideoEncoder() = default;  // Session's members kill, reap, close and remove

void VideoEncoder::add_frame(const std::vector<std::uint8_t>& rgb) {
  std::size_t const expected = std::size_t(width_) * std::size_t(height_) * 3;
  if (rgb.size() != expected) {
    throw std::invalid_argument("VideoEncoder::add_frame: a frame of " + std::to_string(rgb.size()) + " bytes for " +
                                path_ + "; expected " + std::to_string(expected) + " (" + std::to_string(width_) +
                                " x " + std::to_string(height_) + " x 3, RGB)");
  }
  if (!session_) throw std::logic_error("VideoEncoder::add_frame: the video " + path_ + " is already closed");
  int const err =
      write_without_sigpipe(session_->input.get(), rgb.data(), rgb.size(), stall_seconds_, session_->ffmpeg.pid());
  if (err == 0) {
    ++frames_;
    return;
  }
  auto const session = std::move(session_);  // closed whatever happens next: the temporary file goes
  if (err == ECANCELED || err == ETIMEDOUT) {
    char took[200];
    std::snprintf(took, sizeof took, "ffmpeg took nothing of frame %llu and did no work for %g s",
                  static_cast<unsigned long long>(frames_ + 1),
                  err == ECANCELED ? kInterruptedStallSeconds : stall_seconds_);
    if (err == ECANCELED) {  // a signal came meanwhile: the recording ends now, without its video
      std::fprintf(stderr, "viewer: --video %s not written: %s, after the signal\n", path_.c_str(), took);
      throw Interrupted(interrupt_signal());
    }
    throw RuntimeFailure(std::string(kOption) + " " + path_ + ": " + took + " (stalled; nothing was written): " +
                         last_line_of(session->log.get()));
  }
  session->input.reset();
  int const status = session->ffmpeg.wait();
  std::string const doing = err == EPIPE ? "ffmpeg stopped reading" : "cannot write to ffmpeg (" + error_text(err) + ")";
  throw RuntimeFailure(std::string(kOption) + " " + path_ + ": " + doing + " after " + std::to_string(frames_) +
                       " frames (" + describe_status(status) + "): " + last_line_of(session->log.get()));
}

void VideoEncoder::finish() {
  if (!session_) throw std::logic_error("VideoEncoder::finish: the video " + path_ + " is already closed");
  auto const session = std::move(session_);  // closed whatever happens next
  std::string const where = std::string(kOption) + " " + path_ + ": ";
  session->input.reset();  // end of input: ffmpeg encodes what it holds, writes the index, exits
  // Bounded: it encodes what it holds (CPU), writes as it goes (the file grows, then its index moves to the front,
  // rewriting it), so a wait with neither its exit, nor CPU used, nor a write to the file (its size or modification
  // time) for the bound is a stall (after a signal, kInterruptedStallSeconds).
  auto progress = Clock::now();
  struct stat last {};
  long long cpu = cpu_ticks(session->ffmpeg.pid());
  std::optional<int> const ended = session->ffmpeg.wait_unless([&] {
    struct stat st {};
    long long const now = cpu_ticks(session->ffmpeg.pid());
    if (now != cpu || (::fstat(session->output.fd(), &st) == 0 &&
                       (st.st_size != last.st_size || st.st_mtim.tv_sec != last.st_mtim.tv_sec ||
                        st.st_mtim.tv_nsec != last.st_mtim.tv_nsec))) {
      cpu = now;
      last = st;
      progress = Clock::now();
    }
    return seconds_since(progress) > (interrupt_signal() ? kInterruptedStallSeconds : stall_seconds_);
  });
  if (!ended) {
    char took[160];
    std::snprintf(took, sizeof took, "ffmpeg neither ended, worked nor wrote for %g s after the last frame",
                  interrupt_signal() ? kInterruptedStallSeconds : stall_seconds_);
    throw RuntimeFailure(where + took + " (stalled; nothing was written): " + last_line_of(session->log.get()));
  }
  int const status = *ended;
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw RuntimeFailure(where + "ffmpeg failed (" + describe_status(status) + ") after " + std::to_string(frames_) +
                         " frames: " + last_line_of(session->log.get()));
  }
  // Move into place only the file created here (the name could have been replaced in the meantime).
  TemporaryFile& output = session->output;
  if (!output.still_named()) {
    output.disown();  // not ours to remove
    throw RuntimeFailure(where + "the temporary file " + output.path() +
                         " was replaced while ffmpeg wrote it; is another program writing in its folder?");
  }
  if (::fsync(output.fd()) != 0) throw RuntimeFailure(where + "cannot sync " + output.path() + ": " + error_text(errno));
  // Read back before it replaces anything, as a checkpoint is: ffmpeg's exit status does not say the file is whole.
  UniqueFd written(::open(output.path().c_str(), O_RDONLY | O_CLOEXEC));  // the writer's descriptor cannot read
  if (written.get() < 0) throw RuntimeFailure(where + "cannot read back " + output.path() + ": " + error_text(errno));
  if (std::string const why = mp4_problem(written.get(), frames_); !why.empty())
    throw RuntimeFailure(where + "ffmpeg's file is not whole (" + why +
                         "); the disk may be full or failing (nothing was replaced)");
  check_output_path(path_, kOption);  // the target may have become a link, a folder or read-only meanwhile
  if (::rename(output.path().c_str(), path_.c_str()) != 0) {
    throw RuntimeFailure(where + "cannot move " + output.path() + " into place: " + error_text(errno));
  }
  output.disown();
  // Makes the rename durable; a folder that cannot be opened or synced is left to the file system.
  std::string folder = fs::path(path_).parent_path().string();
  UniqueFd dir(::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) static_cast<void>(::fsync(dir.get()));
}

std::uint64_t VideoEncoder::frames() const { return frames_; }
int VideoEncoder::width() const { return width_; }
int VideoEncoder::height() const { return height_; }
int VideoEncoder::encoded_width() const { return width_ + (width_ & 1); }
int VideoEncoder::encoded_height() const { return height_ + (height_ & 1); }

}  // namespace nbody::render
