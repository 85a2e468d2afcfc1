// render/surface.h - where frames go: a GLFW window on a display, or an EGL pbuffer with no
// window system at all (GPU servers). Both own a current OpenGL 3.3+ core context.
#pragma once

#include <memory>
#include <string>

#include "core/errors.h"

struct GLFWwindow;

namespace nbody::render {

// Input gathered between two polls (platform side; the renderer never sees GLFW). Events arrive
// through callbacks, so a key pressed or a drag made between two frames is never lost.
struct Input {
  std::string keys;              // characters typed (render/input.h says which mean what)
  bool escape = false;
  float orbit_dx = 0, orbit_dy = 0;  // left drag, pixels
  float pan_dx = 0, pan_dy = 0;      // right or middle drag, pixels
  float scroll = 0;                  // wheel steps
  bool toggle_fullscreen = false;    // F11
  // Anything at all arrived: a pointer move, a button, a key, a character, the wheel, a new size, focus,
  // the pointer entering or leaving, a window uncovered. The viewer draws on demand: this is how it
  // knows the user did something the next frames may have to show (ImGui's hover, a field's edit).
  bool events = false;
};

class Surface {
 public:
  virtual ~Surface() = default;
  virtual int width() const = 0;   // framebuffer size in pixels
  virtual int height() const = 0;
  virtual bool should_close() const = 0;
  virtual Input poll() = 0;
  // Sleeps until an input event arrives or `seconds` pass (a viewer with nothing new to draw need not spin).
  virtual void wait_events(double seconds) = 0;
  virtual void present() = 0;
  // Whether anyone sees the frames now: a window always; frames sent to browsers only while one is connected.
  virtual bool watched() const { return true; }
  virtual void set_vsync(bool on) = 0;
  // Fullscreen on the primary monitor, or back to the window: false where that cannot be (no
  // monitor, no window), and nothing changes then.
  virtual bool set_fullscreen(bool on) = 0;
  virtual GLFWwindow* glfw_window() { return nullptr; }  // for the HUD's input backend
  virtual std::string describe() const = 0;              // "GLFW window" / "EGL pbuffer (device ...)"
  // A file the viewer's keys wrote on this machine (a screenshot, a checkpoint). A window's user is at this machine
  // and has it already; a surface whose user is elsewhere (a browser) offers it for download.
  virtual void offer_file(const std::string& /*path*/) {}
};

// No window can be opened (no display server answers, or no OpenGL 3.3 context): the default mode
// falls back to the benchmark.
struct WindowUnavailable : RuntimeFailure {
  explicit WindowUnavailable(const std::string& what) : RuntimeFailure(what) {}
};

// A resizable window; throws WindowUnavailable when GLFW or the GL context cannot start.
std::unique_ptr<Surface> open_window(int width, int height, const std::string& title);
// An offscreen surface through EGL: an NVIDIA device if one is there (EGL_EXT_platform_device),
// otherwise the default display (Mesa). Throws RuntimeFailure when EGL cannot give a context, naming `asked_by`, the
// option that asked for it ("--offscreen", "--serve").
std::unique_ptr<Surface> open_offscreen(int width, int height, const std::string& asked_by);

// The GL renderer and version strings of the current context.
std::string gl_description();

}  // namespace nbody::render
