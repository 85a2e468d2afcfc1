// render/video_encoder.h - the viewer's frames into an H.264 MP4 through an ffmpeg child process (GL-free).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nbody::render {

// Records RGB frames into PATH as an H.264 MP4 (libx264; yuv420p, so that common players open it;
// +faststart, so that it plays while it downloads), by piping them raw (rgb24) into an ffmpeg child
// process started with an argument vector, never a shell. The container is MP4 whatever PATH's
// extension says.
//
// Whole or not at all: ffmpeg writes a hidden temporary file beside PATH (".NAME.XXXXXX.EXT", the
// extension kept), which finish() renames onto PATH only after ffmpeg exited with 0 and the file, read back, is
// whole (its boxes tile it, its index counts every frame: ffmpeg exits with 0 after a disk that filled as it moved
// the index to the front); a failure, or
// destruction without finish(), stops ffmpeg and removes it.
//
// Odd sizes: yuv420p stores colour once per 2x2 pixels, so libx264 needs an even width and height.
// An odd width gets one black column on the right, an odd height one black row at the bottom
// (ffmpeg's pad filter): every pixel is kept as it is, nothing is scaled, and the video is
// encoded_width() x encoded_height() (95 x 63 frames make a 96 x 64 video).
//
// ffmpeg runs in a process group of its own, so that Ctrl-C reaches nbody alone, which then finishes
// or abandons the video at its own safe point. It inherits no file descriptor of nbody's but its
// stdin (the frames), stdout (/dev/null) and stderr (kept in memory, so that a failure quotes its
// last line). A dead ffmpeg is an error, not the end of nbody: writing to it never raises SIGPIPE.
// A stalled one is too: every wait on it is bounded. A frame that ffmpeg takes no byte of while it
// uses no CPU for `stall_seconds`, or a finish() in which it neither exits, works nor writes for that
// long, is a RuntimeFailure; after a signal (core/interrupt.h) the bound is kInterruptedStallSeconds, and a frame
// then abandons the video (Interrupted, the reason on stderr), while finish() keeps the frames given.
// One thread uses an encoder at a time.
class VideoEncoder {
 public:
  // Starts ffmpeg writing `path` at `fps` frames per second, `width` x `height` pixels. Throws
  // InputError for a path check_output_path refuses ("--video /nope/out.mp4: the folder /nope does not
  // exist"), a size outside 1..16384, a rate not in (0, 1000], or no ffmpeg on PATH ("--video out.mp4:
  // ffmpeg not found on PATH; install it (Debian: ffmpeg)"); RuntimeFailure when it cannot be started.
  VideoEncoder(const std::string& path, int width, int height, double fps, double stall_seconds = 60.0);
  static constexpr double kInterruptedStallSeconds = 5.0;
  // If finish() was not called (or failed): kills ffmpeg, reaps it and removes the temporary file.
  // Never throws.
  ~VideoEncoder();
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  // One frame: width * height * 3 bytes (RGB), top row first. A frame of another size is a bug of the
  // caller: std::invalid_argument. A dead ffmpeg: RuntimeFailure naming the file and ffmpeg's last
  // error line, after which the encoder is closed (the temporary file removed).
  void add_frame(const std::vector<std::uint8_t>& rgb);

  // Closes ffmpeg's input, waits for it, checks that it exited with 0, and moves the file into place
  // (synced first). RuntimeFailure when ffmpeg failed; InputError when PATH went bad during the
  // recording (check_output_path). Either way the temporary file is removed. add_frame() or finish()
  // on a closed encoder: std::logic_error.
  void finish();

  std::uint64_t frames() const;  // frames written so far
  int width() const;             // of the frames given to add_frame()
  int height() const;
  int encoded_width() const;     // of the video: width() rounded up to even
  int encoded_height() const;

 private:
  struct Session;  // the child process, its pipes and the temporary file: all owned, all released
  std::string path_;
  int width_ = 0;
  int height_ = 0;
  std::uint64_t frames_ = 0;
  double stall_seconds_ = 60.0;
  std::unique_ptr<Session> session_;  // null once finished or failed
};

}  // namespace nbody::render
