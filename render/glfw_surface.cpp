// render/glfw_surface.cpp - the platform side of the viewer: GLFW window, context and input.
#include <GL/glew.h>
#include <GLFW/glfw3.h>

#include <cmath>
#include <string>

#include "core/errors.h"
#include "render/surface.h"

namespace nbody::render {
namespace {

// Raw input between two polls, filled by GLFW's callbacks as events arrive.
struct Pointer {
  double x = 0, y = 0;
  bool left = false, pan = false;  // which buttons are down
  Input pending;
};

void something_happened(GLFWwindow* w) { static_cast<Pointer*>(glfwGetWindowUserPointer(w))->pending.events = true; }

class GlfwSurface final : public Surface {
 public:
  GlfwSurface(int width, int height, const std::string& title) {
    glfwSetErrorCallback([](int, const char* text) { last_error() = text; });
    if (!glfwInit()) throw WindowUnavailable("cannot open a window: " + last_error());
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
    if (!window_) {
      glfwTerminate();
      throw WindowUnavailable("cannot open a window with an OpenGL 3.3 core context: " + last_error());
    }
    glfwMakeContextCurrent(window_);
    glewExperimental = GL_TRUE;
    GLenum const status = glewInit();
    (void)glGetError();  // GLEW's probe on core profiles leaves an INVALID_ENUM behind
    if (status != GLEW_OK) {
      std::string const why = reinterpret_cast<const char*>(glewGetErrorString(status));
      glfwDestroyWindow(window_);
      glfwTerminate();
      throw RuntimeFailure("cannot load OpenGL functions (GLEW): " + why);
    }
    glfwSwapInterval(1);
    glfwSetWindowUserPointer(window_, &pointer_);
    // Every callback also says that something happened (Input::events): the viewer draws on demand.
    // Set before the HUD's ImGui backend installs its own callbacks, which call these.
    glfwSetCharCallback(window_, [](GLFWwindow* w, unsigned int c) {
      auto& p = *static_cast<Pointer*>(glfwGetWindowUserPointer(w));
      p.pending.events = true;
      if (c < 128) p.pending.keys += char(c);
    });
    glfwSetKeyCallback(window_, [](GLFWwindow* w, int key, int, int action, int) {
      auto& p = *static_cast<Pointer*>(glfwGetWindowUserPointer(w));
      p.pending.events = true;  // a release or a repeat too: ImGui sees keys held
      if (action != GLFW_PRESS) return;
      if (key == GLFW_KEY_ESCAPE) p.pending.escape = true;
      if (key == GLFW_KEY_F11) p.pending.toggle_fullscreen = true;
    });
    glfwSetScrollCallback(window_, [](GLFWwindow* w, double, double dy) {
      auto& p = *static_cast<Pointer*>(glfwGetWindowUserPointer(w));
      p.pending.events = true;
      p.pending.scroll += float(dy);
    });
    // Drags add up motion event by event, so one shorter than a frame still moves the camera.
    glfwSetMouseButtonCallback(window_, [](GLFWwindow* w, int button, int action, int) {
      auto& p = *static_cast<Pointer*>(glfwGetWindowUserPointer(w));
      p.pending.events = true;
      bool const down = action == GLFW_PRESS;
      if (button == GLFW_MOUSE_BUTTON_LEFT) p.left = down;
      if (button == GLFW_MOUSE_BUTTON_RIGHT || button == GLFW_MOUSE_BUTTON_MIDDLE) p.pan = down;
      glfwGetCursorPos(w, &p.x, &p.y);
    });
    glfwSetCursorPosCallback(window_, [](GLFWwindow* w, double x, double y) {
      auto& p = *static_cast<Pointer*>(glfwGetWindowUserPointer(w));
      p.pending.events = true;
      if (p.left) p.pending.orbit_dx += float(x - p.x), p.pending.orbit_dy += float(y - p.y);
      if (p.pan) p.pending.pan_dx += float(x - p.x), p.pending.pan_dy += float(y - p.y);
      p.x = x;
      p.y = y;
    });
    // What changes the window without a key or the mouse: the pointer entering or leaving (ImGui's
    // hover), focus, a new size, and a window uncovered that must be drawn again (X11 without a
    // compositor keeps no copy of it).
    glfwSetCursorEnterCallback(window_, [](GLFWwindow* w, int) { something_happened(w); });
    glfwSetWindowFocusCallback(window_, [](GLFWwindow* w, int) { something_happened(w); });
    glfwSetFramebufferSizeCallback(window_, [](GLFWwindow* w, int, int) { something_happened(w); });
    glfwSetWindowRefreshCallback(window_, [](GLFWwindow* w) { something_happened(w); });
  }

  ~GlfwSurface() override {
    glfwDestroyWindow(window_);
    glfwTerminate();
  }

  int width() const override {
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    return w;
  }
  int height() const override {
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    return h;
  }
  bool should_close() const override { return glfwWindowShouldClose(window_); }

  Input poll() override {
    glfwPollEvents();
    Input in = pointer_.pending;
    pointer_.pending = Input{};
    return in;
  }

  void wait_events(double seconds) override { glfwWaitEventsTimeout(seconds); }

  void present() override { glfwSwapBuffers(window_); }
  void set_vsync(bool on) override { glfwSwapInterval(on ? 1 : 0); }

  bool set_fullscreen(bool on) override {
    GLFWmonitor* monitor = glfwGetPrimaryMonitor();
    if (on && !monitor) return false;
    if (on) {
      glfwGetWindowPos(window_, &saved_x_, &saved_y_);
      glfwGetWindowSize(window_, &saved_w_, &saved_h_);
      GLFWvidmode const* mode = glfwGetVideoMode(monitor);
      if (!mode) return false;
      glfwSetWindowMonitor(window_, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
    } else {
      glfwSetWindowMonitor(window_, nullptr, saved_x_, saved_y_, saved_w_, saved_h_, 0);
    }
    return true;
  }

  GLFWwindow* glfw_window() override { return window_; }
  std::string describe() const override { return "GLFW window"; }

 private:
  static std::string& last_error() {
    static std::string e = "unknown error";
    return e;
  }
  GLFWwindow* window_ = nullptr;
  Pointer pointer_;
  int saved_x_ = 100, saved_y_ = 100, saved_w_ = 1280, saved_h_ = 800;
};

}  // namespace

std::unique_ptr<Surface> open_window(int width, int height, const std::string& title) {
  return std::make_unique<GlfwSurface>(width, height, title);
}

std::string gl_description() {
  auto str = [](GLenum e) {
    auto const* s = glGetString(e);
    return s ? std::string(reinterpret_cast<const char*>(s)) : std::string("?");
  };
  return str(GL_RENDERER) + ", OpenGL " + str(GL_VERSION);
}

}  // namespace nbody::render
