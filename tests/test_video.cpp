// tests/test_video.cpp - recording frames through ffmpeg (render/video_encoder.h): what ffprobe reads back,
// odd sizes, whole-or-nothing outputs, a missing or dying ffmpeg, and what the child process inherits.
// Real encodings skip without ffmpeg and ffprobe; the failure cases use a fake ffmpeg (a shell script).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/interrupt.h"
#include "render/video_encoder.h"
#include "test_support.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;
using test::rejected_with;

constexpr int kWidth = 96;     // pixels: small, so that the encodings take milliseconds
constexpr int kHeight = 64;
constexpr double kFps = 15.0;

// A fresh folder for the running test (test::fresh_test_dir), removed at the end.
class ScopedDir {
 public:
  ScopedDir() : path_(test::fresh_test_dir("nbody-video")) {
    fs::create_directories(path_ / "out");
  }
  ~ScopedDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScopedDir(const ScopedDir&) = delete;
  ScopedDir& operator=(const ScopedDir&) = delete;
  const fs::path& path() const { return path_; }
  // A file in out/, the folder the outputs go to (so that it holds nothing else).
  std::string file(const std::string& name) const { return (path_ / "out" / name).string(); }
  // Every name in out/ (hidden ones too), sorted: what a recording left behind.
  Names outputs() const {
    Names names;
    for (auto const& e : fs::directory_iterator(path_ / "out")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

// Sets PATH for the life of the object, then restores it (or unsets it, if it was unset).
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (char const* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (old_) {
      ::setenv("PATH", old_->c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::optional<std::string> old_;
};

bool on_path(const std::string& program) {
  std::string const command = "command -v " + program + " >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

bool ffmpeg_tools_found() { return on_path("ffmpeg") && on_path("ffprobe"); }

// 'text' for the shell, whatever it holds (spaces, quotes).
std::string quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// What a shell command writes to its stdout.
std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[65536];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
    ::pclose(pipe);
  }
  return out;
}

// ffprobe's "codec,width,height,pixel format,frames decoded" for the first video stream of FILE.
std::string probe(const std::string& file) {
  std::string out = output_of("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                              "stream=nb_read_frames,width,height,codec_name,pix_fmt -of csv=p=0 " + quoted(file));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Frame k of a gradient that moves one step per frame: red across, green down, blue constant.
std::vector<std::uint8_t> gradient_frame(int width, int height, int k) {
  std::vector<std::uint8_t> rgb(std::size_t(width) * std::size_t(height) * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      std::size_t const i = (std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3;
      rgb[i + 0] = std::uint8_t((x * 255 / std::max(width - 1, 1) + 8 * k) & 255);
      rgb[i + 1] = std::uint8_t(y * 255 / std::max(height - 1, 1));
      rgb[i + 2] = 128;
    }
  }
  return rgb;
}

// Records `count` gradient frames into FILE with the real ffmpeg.
void record(const std::string& file, int width, int height, int count) {
  render::VideoEncoder video(file, width, height, kFps);
  for (int k = 0; k < count; ++k) video.add_frame(gradient_frame(width, height, k));
  EXPECT_EQ(video.frames(), std::uint64_t(count));
  video.finish();
}

// True when this process has no child left, running or zombie.
bool no_children_left() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// A fake "ffmpeg" in DIR/bin running the shell commands `body`; returns DIR/bin, for PATH.
std::string fake_ffmpeg(const ScopedDir& dir, const std::string& body) {
  fs::path const bin = dir.path() / "bin";
  fs::create_directories(bin);
  {
    std::ofstream script(bin / "ffmpeg");
    script << "#!/bin/sh\nPATH=/usr/bin:/bin\n" << body << "\n";
  }
  fs::permissions(bin / "ffmpeg", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  return bin.string();
}

// The smallest MP4 that finish() takes for `frames` frames: its boxes tile the file (ftyp, moov, mdat), and the
// index's sample table (moov/trak/mdia/minf/stbl/stsz) counts the frames. `cut` bytes short: what ffmpeg leaves when
// the disk fills as it moves the index to the front.
std::string tiny_mp4(std::uint32_t frames, std::size_t cut = 0) {
  auto box = [](const std::string& type, const std::string& contents) {
    std::uint32_t const size = std::uint32_t(8 + contents.size());
    std::string b{char(size >> 24), char(size >> 16), char(size >> 8), char(size)};
    return b + type + contents;
  };
  std::string const count{char(frames >> 24), char(frames >> 16), char(frames >> 8), char(frames)};
  std::string const stsz = box("stsz", std::string(8, '\0') + count);
  std::string const file = box("ftyp", std::string("isom") + std::string(4, '\0')) +
                           box("moov", box("trak", box("mdia", box("minf", box("stbl", stsz))))) +
                           box("mdat", std::string(16, 'x'));
  return file.substr(0, file.size() - cut);
}

// The shell commands of a fake ffmpeg that reads every frame, then writes `mp4` to its output argument (the last
// one, "file:" + the temporary name).
std::string writes(const ScopedDir& dir, const std::string& mp4) {
  fs::create_directories(dir.path() / "bin");
  std::string const made = (dir.path() / "bin" / "made.mp4").string();
  { std::ofstream(made, std::ios::binary) << mp4; }
  return "for last; do :; done\ncat > /dev/null\ncat " + quoted(made) + " > \"${last#file:}\"";
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST(Video, RecordsEveryFrameAsH264ThatFfprobeReads) {
  if (!ffmpeg_tools_found()) GTEST_SKIP() << "needs ffmpeg and ffprobe on PATH (Debian: ffmpeg)";
  ScopedDir dir;
  std::string const name = "it's a \"test\" movie.mp4";  // passed as an argument, never through a shell
  record(dir.file(name), kWidth, kHeight, 30);
  EXPECT_EQ(probe(dir.file(name)), "h264,96,64,yuv420p,30");
  EXPECT_EQ(dir.outputs(), Names{name}) << "the temporary file is gone";
  // +faststart: the index (moov) comes before the media data (mdat).
  std::string const bytes = slurp(dir.file(name));
  EXPECT_LT(bytes.find("moov"), bytes.find("mdat"));
  EXPECT_TRUE(no_children_left());
}

TEST(Video, FrameCountCheckTellsTwentyNineFromThirty) {  // negative control for the test above
  if (!ffmpeg_tools_found()) GTEST_SKIP() << "needs ffmpeg and ffprobe on PATH (Debian: ffmpeg)";
  ScopedDir dir;
  record(dir.file("short.mp4"), kWidth, kHeight, 29);
  EXPECT_NE(probe(dir.file("short.mp4")), "h264,96,64,yuv420p,30");
  EXPECT_EQ(probe(dir.file("short.mp4")), "h264,96,64,yuv420p,29");
}

// Mean of one colour channel over the pixels of an RGB image that `inside` selects.
template <class Inside>
double mean_level(const std::string& rgb, int width, int height, Inside inside) {
  double sum = 0;
  std::size_t n = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (!inside(x, y)) continue;
      sum += static_cast<unsigned char>(rgb[(std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3]);
      ++n;
    }
  }
  return n ? sum / double(n) : -1;
}

// White 95 x 63 frames decode as white 96 x 64 frames with a black right column and bottom row:
// padded, not scaled (a scaled video would be white to its edges). Measured: interior 254.9, the
// column beside the padding 253.1, the padded column and row 1.9.
constexpr double kWhiteAtLeast = 220;
constexpr double kBlackAtMost = 40;

TEST(Video, OddSizeIsPaddedWithOneBlackColumnAndRow) {
  if (!ffmpeg_tools_found()) GTEST_SKIP() << "needs ffmpeg and ffprobe on PATH (Debian: ffmpeg)";
  ScopedDir dir;
  std::string const file = dir.file("odd.mp4");
  {
    render::VideoEncoder video(file, 95, 63, kFps);
    EXPECT_EQ(video.encoded_width(), 96);
    EXPECT_EQ(video.encoded_height(), 64);
    for (int k = 0; k < 5; ++k) video.add_frame(std::vector<std::uint8_t>(95 * 63 * 3, 255));
    video.finish();
  }
  EXPECT_EQ(probe(file), "h264,96,64,yuv420p,5");
  std::string const rgb =
      output_of("ffmpeg -v error -i " + quoted(file) + " -frames:v 1 -f rawvideo -pix_fmt rgb24 -");
  ASSERT_EQ(rgb.size(), std::size_t(96 * 64 * 3));
  EXPECT_GT(mean_level(rgb, 96, 64, [](int x, int y) { return x < 94 && y < 62; }), kWhiteAtLeast);
  EXPECT_LT(mean_level(rgb, 96, 64, [](int x, int) { return x == 95; }), kBlackAtMost);
  EXPECT_LT(mean_level(rgb, 96, 64, [](int, int y) { return y == 63; }), kBlackAtMost);
  // Negative control: the column next to the padding is picture, not black.
  EXPECT_GT(mean_level(rgb, 96, 64, [](int x, int y) { return x == 93 && y < 62; }), kWhiteAtLeast);
}

TEST(Video, DestroyedWithoutFinishLeavesNoFile) {
  if (!ffmpeg_tools_found()) GTEST_SKIP() << "needs ffmpeg and ffprobe on PATH (Debian: ffmpeg)";
  ScopedDir dir;
  {
    render::VideoEncoder video(dir.file("abandoned.mp4"), kWidth, kHeight, kFps);
    for (int k = 0; k < 5; ++k) video.add_frame(gradient_frame(kWidth, kHeight, k));
    // While it records: one hidden temporary file beside the output, its extension kept.
    Names const during = dir.outputs();
    ASSERT_EQ(during.size(), 1u);
    EXPECT_EQ(during[0].rfind(".abandoned.mp4.", 0), 0u) << during[0];
    EXPECT_EQ(during[0].size(), std::string(".abandoned.mp4.XXXXXX.mp4").size()) << during[0];
    EXPECT_EQ(during[0].substr(during[0].size() - 4), ".mp4");
  }
  EXPECT_EQ(dir.outputs(), Names{});
  EXPECT_TRUE(no_children_left());
}

// A recording that ends before its first frame (a window resized at once) is ffmpeg's whole empty video, whose index
// has no track: read back, it is taken as it is, not as a disk that failed.
TEST(Video, NoFramesIsAWholeEmptyVideo) {
  if (!ffmpeg_tools_found()) GTEST_SKIP() << "needs ffmpeg and ffprobe on PATH (Debian: ffmpeg)";
  ScopedDir dir;
  render::VideoEncoder video(dir.file("empty.mp4"), kWidth, kHeight, kFps);
  video.finish();
  EXPECT_EQ(dir.outputs(), Names{"empty.mp4"});
}

TEST(Video, MissingFfmpegIsAnInputError) {
  ScopedDir dir;
  fs::create_directories(dir.path() / "empty");
  std::string const file = dir.file("out.mp4");
  std::string const path_before = std::getenv("PATH") ? std::getenv("PATH") : "";
  {
    ScopedPath no_ffmpeg((dir.path() / "empty").string());
    try {
      render::VideoEncoder video(file, kWidth, kHeight, kFps);
      ADD_FAILURE() << "accepted without ffmpeg";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "--video " + file + ": ffmpeg not found on PATH; install it (Debian: ffmpeg)");
    }
  }
  EXPECT_EQ(std::string(std::getenv("PATH") ? std::getenv("PATH") : ""), path_before);
  EXPECT_EQ(dir.outputs(), Names{});
}

TEST(Video, MissingFolderIsRefusedBeforeFfmpegStarts) {
  ScopedDir dir;
  std::string const started = (dir.path() / "started").string();
  ScopedPath fake(fake_ffmpeg(dir, ": > " + quoted(started) + "\n" + writes(dir, tiny_mp4(0))));
  std::string const missing = (dir.path() / "nope" / "out.mp4").string();
  EXPECT_TRUE(rejected_with([&] { render::VideoEncoder video(missing, kWidth, kHeight, kFps); },
                            "--video " + missing + ": the folder " + (dir.path() / "nope").string() + " does not exist"));
  EXPECT_FALSE(fs::exists(started));
  // Negative control: with a folder that exists, the same fake ffmpeg does start.
  render::VideoEncoder video(dir.file("out.mp4"), kWidth, kHeight, kFps);
  video.finish();
  EXPECT_TRUE(fs::exists(started));
}

TEST(Video, BadSizeOrRateIsRefused) {
  ScopedDir dir;
  std::string const file = dir.file("out.mp4");
  auto make = [&](int w, int h, double fps) { return [=] { render::VideoEncoder video(file, w, h, fps); }; };
  EXPECT_TRUE(rejected_with(make(0, kHeight, kFps), "--video " + file + ": frame size 0 x 64: width and height"));
  EXPECT_TRUE(rejected_with(make(kWidth, 20000, kFps), "frame size 96 x 20000"));
  EXPECT_TRUE(rejected_with(make(kWidth, kHeight, 0), ": 0 frames per second: must be above 0"));
  EXPECT_TRUE(rejected_with(make(kWidth, kHeight, std::nan("")), ": nan frames per second"));
  EXPECT_EQ(dir.outputs(), Names{});
}

TEST(Video, FrameOfTheWrongSizeIsRefused) {
  ScopedDir dir;
  ScopedPath fake(fake_ffmpeg(dir, writes(dir, tiny_mp4(1))));
  render::VideoEncoder video(dir.file("out.mp4"), kWidth, kHeight, kFps);
  std::vector<std::uint8_t> frame(kWidth * kHeight * 3 - 1);
  try {
    video.add_frame(frame);
    ADD_FAILURE() << "a frame one byte short was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a frame of 18431 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected 18432 (96 x 64 x 3, RGB)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(video.frames(), 0u);
  frame.push_back(0);  // negative control: the right size goes through
  video.add_frame(frame);
  EXPECT_EQ(video.frames(), 1u);
  video.finish();
}

// An ffmpeg that takes nothing (stalled, or stopped with SIGSTOP) is a bounded wait, not a hang: a frame it takes no
// byte of for the bound is a RuntimeFailure naming the stall, and the temporary file goes; after a signal, the frame
// gives up within kInterruptedStallSeconds and the recording ends without its video (Interrupted), so that SIGTERM
// and a first Ctrl-C end it. An ffmpeg that takes every frame but never ends bounds finish() alike.
TEST(Video, AStalledFfmpegIsABoundedWait) {
  ScopedDir dir;
  std::vector<std::uint8_t> const frame(320 * 240 * 3, 7);  // more than a pipe holds (64 KiB)
  auto seconds = [](auto t0) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  {
    ScopedPath fake(fake_ffmpeg(dir, "exec sleep 1000"));
    render::VideoEncoder video(dir.file("stalled.mp4"), 320, 240, kFps, 1.0);
    auto const t0 = std::chrono::steady_clock::now();
    try {
      video.add_frame(frame);
      ADD_FAILURE() << "a frame ffmpeg never read was taken";
    } catch (const RuntimeFailure& e) {
      EXPECT_NE(std::string(e.what()).find(": ffmpeg took nothing of frame 1 and did no work for 1 s (stalled; nothing was written)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_LT(seconds(t0), 10.0);
    EXPECT_EQ(dir.outputs(), Names{}) << "the temporary file was left";
  }
  {
    ScopedPath fake(fake_ffmpeg(dir, "exec sleep 1000"));
    render::VideoEncoder video(dir.file("signalled.mp4"), 320, 240, kFps);  // the usual bound: a minute
    request_interrupt(SIGTERM);
    auto const t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(video.add_frame(frame), Interrupted);
    clear_interrupt();
    EXPECT_LT(seconds(t0), render::VideoEncoder::kInterruptedStallSeconds + 5.0);
    EXPECT_EQ(dir.outputs(), Names{});
  }
  {
    ScopedPath fake(fake_ffmpeg(dir, "cat > /dev/null; exec sleep 1000"));
    render::VideoEncoder video(dir.file("unending.mp4"), 320, 240, kFps, 1.0);
    video.add_frame(frame);
    video.add_frame(frame);
    auto const t0 = std::chrono::steady_clock::now();
    try {
      video.finish();
      ADD_FAILURE() << "an ffmpeg that never ended was waited out";
    } catch (const RuntimeFailure& e) {
      EXPECT_NE(std::string(e.what()).find(": ffmpeg neither ended, worked nor wrote for 1 s after the last frame (stalled; "
                                           "nothing was written)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_LT(seconds(t0), 10.0);
    EXPECT_EQ(dir.outputs(), Names{});
  }
}

// After a signal, an ffmpeg still at work (its last frames, the index: seconds at large sizes, with nothing written
// meanwhile) is waited for, and the video keeps the frames made: the short bound is for an ffmpeg that does nothing.
TEST(Video, ABusyFfmpegFinishesTheVideoAfterASignal) {
  ScopedDir dir;
  std::string const busy = "end=$(($(date +%s) + 8)); while [ \"$(date +%s)\" -lt \"$end\" ]; do :; done\n";
  std::string const body = writes(dir, tiny_mp4(2));
  std::size_t const cat = body.find("cat > /dev/null\n") + std::string("cat > /dev/null\n").size();
  ScopedPath fake(fake_ffmpeg(dir, body.substr(0, cat) + busy + body.substr(cat)));  // reads, works 8 s, writes
  render::VideoEncoder video(dir.file("busy.mp4"), kWidth, kHeight, kFps);
  std::vector<std::uint8_t> const frame(kWidth * kHeight * 3, 7);
  video.add_frame(frame);
  video.add_frame(frame);
  request_interrupt(SIGTERM);
  EXPECT_NO_THROW(video.finish());
  clear_interrupt();
  EXPECT_EQ(dir.outputs(), Names{"busy.mp4"});
}

TEST(Video, DyingFfmpegIsAnErrorNotSigpipe) {
  ScopedDir dir;
  // Exits without reading: the pipe fills (64 KiB), then every write finds no reader (EPIPE, SIGPIPE).
  ScopedPath fake(fake_ffmpeg(dir, "echo 'fake ffmpeg: Conversion failed!' >&2\nexit 1"));
  std::string const file = dir.file("out.mp4");
  render::VideoEncoder video(file, kWidth, kHeight, kFps);
  std::string message;
  for (int k = 0; k < 100 && message.empty(); ++k) {  // 100 frames of 18 KiB: far more than the pipe holds
    try {
      video.add_frame(gradient_frame(kWidth, kHeight, k));
    } catch (const RuntimeFailure& e) {
      message = e.what();
    }
  }
  EXPECT_EQ(message.rfind("--video " + file + ": ffmpeg stopped reading after ", 0), 0u) << message;
  EXPECT_NE(message.find("frames (exit status 1): fake ffmpeg: Conversion failed!"), std::string::npos) << message;
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0) << "the SIGPIPE of the failed write was consumed";
  EXPECT_EQ(dir.outputs(), Names{}) << "the temporary file is removed";
  EXPECT_TRUE(no_children_left());
  EXPECT_THROW(video.finish(), std::logic_error);  // closed by the failure
}

TEST(Video, FailedFfmpegAtFinishLeavesNoFile) {
  ScopedDir dir;
  // The line that names the system's cause, where a later one does not (ffmpeg's own last line on a full disk).
  ScopedPath fake(fake_ffmpeg(dir, "cat > /dev/null\necho 'warning: ignore me' >&2\n"
                                   "printf 'fake ffmpeg: No space left on device\\n\\n' >&2\n"
                                   "echo 'Error initializing output stream 0:0 --' >&2\nexit 3"));
  std::string const file = dir.file("out.mp4");
  render::VideoEncoder video(file, kWidth, kHeight, kFps);
  for (int k = 0; k < 3; ++k) video.add_frame(gradient_frame(kWidth, kHeight, k));
  try {
    video.finish();
    ADD_FAILURE() << "a failed ffmpeg was taken for a success";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()),
              "--video " + file + ": ffmpeg failed (exit status 3) after 3 frames: fake ffmpeg: No space left on device");
  }
  EXPECT_EQ(dir.outputs(), Names{});
  EXPECT_TRUE(no_children_left());
  EXPECT_THROW(video.add_frame(gradient_frame(kWidth, kHeight, 3)), std::logic_error);
}

TEST(Video, FinishReplacesAnOlderFileWhole) {
  ScopedDir dir;
  std::string const file = dir.file("out.mp4");
  { std::ofstream(file) << "old"; }
  ScopedPath fake(fake_ffmpeg(dir, writes(dir, tiny_mp4(1))));
  {
    render::VideoEncoder abandoned(file, kWidth, kHeight, kFps);
  }
  EXPECT_EQ(slurp(file), "old") << "an abandoned recording leaves the old file alone";
  render::VideoEncoder video(file, kWidth, kHeight, kFps);
  video.add_frame(gradient_frame(kWidth, kHeight, 0));
  EXPECT_EQ(slurp(file), "old");
  video.finish();
  EXPECT_EQ(slurp(file), tiny_mp4(1));
  EXPECT_EQ(dir.outputs(), Names{"out.mp4"});
}

// ffmpeg exits with 0 after a disk that filled as it moved the index to the front, leaving a file cut short: read
// back, that is an error, and the older file stays. So is a file whose index counts other frames than were given.
TEST(Video, AFileFfmpegLeftCutShortReplacesNothing) {
  ScopedDir dir;
  std::string const file = dir.file("out.mp4");
  { std::ofstream(file) << "old"; }
  for (auto const& [made, why] : {std::pair{tiny_mp4(2, 5), "its mdat box at byte 76 runs past its end, byte 95"},
                                  std::pair{tiny_mp4(2, 40), "its moov box at byte 16 runs past its end, byte 60"},
                                  std::pair{tiny_mp4(3), "its index holds 3 frames of the 2 given"},
                                  std::pair{std::string(), "it is empty"}}) {
    ScopedPath fake(fake_ffmpeg(dir, writes(dir, made)));
    render::VideoEncoder video(file, kWidth, kHeight, kFps);
    video.add_frame(gradient_frame(kWidth, kHeight, 0));
    video.add_frame(gradient_frame(kWidth, kHeight, 1));
    try {
      video.finish();
      ADD_FAILURE() << "published: " << why;
    } catch (const RuntimeFailure& e) {  // the machine's failure (exit 1), not the user's input
      EXPECT_NE(std::string(e.what()).find("--video " + file + ": ffmpeg's file is not whole (" + why + ")"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(slurp(file), "old");
    EXPECT_EQ(dir.outputs(), Names{"out.mp4"}) << "the temporary file is removed";
  }
}

TEST(Video, FfmpegInheritsOnlyItsStdioAndHasItsOwnProcessGroup) {
  ScopedDir dir;
  int const stray = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: exec alone would pass it on
  ASSERT_GE(stray, 3);
  std::string const report = (dir.path() / "report").string();
  std::string const fd = std::to_string(stray);
  ScopedPath fake(fake_ffmpeg(dir, "{ [ -e /proc/$$/fd/" + fd + " ] && echo 'fd " + fd + " inherited' || echo 'fd " +
                                       fd + " closed'\n"
                                       "  [ -e /proc/$$/fd/0 ] && echo 'fd 0 open'\n"  // control: the check sees open fds
                                       "  echo \"pgid $(cut -d' ' -f5 /proc/$$/stat)\"\n"
                                       "} > " + quoted(report) + "\n" + writes(dir, tiny_mp4(0))));
  render::VideoEncoder video(dir.file("out.mp4"), kWidth, kHeight, kFps);
  video.finish();
  ::close(stray);
  EXPECT_EQ(slurp(report).substr(0, slurp(report).find("pgid")), "fd " + fd + " closed\nfd 0 open\n");
  EXPECT_NE(slurp(report).find("pgid "), std::string::npos);
  EXPECT_EQ(slurp(report).find("pgid " + std::to_string(::getpgrp()) + "\n"), std::string::npos)
      << "ffmpeg runs in its own process group: " << slurp(report);
}

}  // namespace
}  // namespace nbody
