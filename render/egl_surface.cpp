// render/egl_surface.cpp - offscreen rendering with no window system: an EGL pbuffer on a GPU
// device (EGL_EXT_platform_device, the usual state of a GPU server), else the default display.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glew.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "render/surface.h"

namespace nbody::render {
namespace {

// The name of an EGL error code (EGL 1.5, section 3.1), the code itself only as detail: "EGL_BAD_PARAMETER, 0x300c".
std::string egl_error_name(EGLint code) {
  static const char* const kNames[] = {"EGL_SUCCESS",           "EGL_NOT_INITIALIZED",   "EGL_BAD_ACCESS",
                                       "EGL_BAD_ALLOC",         "EGL_BAD_ATTRIBUTE",     "EGL_BAD_CONFIG",
                                       "EGL_BAD_CONTEXT",       "EGL_BAD_CURRENT_SURFACE", "EGL_BAD_DISPLAY",
                                       "EGL_BAD_MATCH",         "EGL_BAD_NATIVE_PIXMAP", "EGL_BAD_NATIVE_WINDOW",
                                       "EGL_BAD_PARAMETER",     "EGL_BAD_SURFACE",       "EGL_CONTEXT_LOST"};
  char code_text[16];
  std::snprintf(code_text, sizeof code_text, "0x%04x", unsigned(code));
  bool const known = code >= EGL_SUCCESS && code <= EGL_CONTEXT_LOST;
  return known ? std::string(kNames[code - EGL_SUCCESS]) + ", " + code_text : std::string("EGL error ") + code_text;
}

std::string egl_error(const char* what) { return std::string(what) + " failed (" + egl_error_name(eglGetError()) + ")"; }

class EglSurface final : public Surface {
 public:
  EglSurface(int width, int height, std::string asked_by) : width_(width), height_(height), asked_by_(std::move(asked_by)) {
    display_ = device_display();
    if (display_ == EGL_NO_DISPLAY) {
      // Neither a GPU device nor the default display: no EGL driver answered (GLVND found no vendor library, or the
      // one it found has no display here). Said in words, the EGL call and its error as detail.
      display_ = eglGetDisplay(EGL_DEFAULT_DISPLAY);
      std::string failed;
      if (display_ == EGL_NO_DISPLAY)
        failed = "eglGetDisplay: " + egl_error_name(eglGetError());
      else if (!eglInitialize(display_, nullptr, nullptr))
        failed = "eglInitialize: " + egl_error_name(eglGetError());
      if (!failed.empty()) {
        display_ = EGL_NO_DISPLAY;  // nothing to release
        throw RuntimeFailure(asked_by_ + ": no EGL driver could give a display to render into (" + failed +
                             "); EGL rendering needs Mesa's EGL (Debian: libegl-mesa0) or the NVIDIA driver");
      }
      source_ = "default display";
    }
    EGLint const config_attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                        EGL_RED_SIZE,     8,               EGL_GREEN_SIZE,      8,
                                        EGL_BLUE_SIZE,    8,               EGL_ALPHA_SIZE,      8,
                                        EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    if (!eglChooseConfig(display_, config_attributes, &config, 1, &count) || count == 0)
      fail(asked_by_ + ": no EGL config for an OpenGL pbuffer");
    EGLint const pbuffer_attributes[] = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE};
    surface_ = eglCreatePbufferSurface(display_, config, pbuffer_attributes);
    if (surface_ == EGL_NO_SURFACE) fail(asked_by_ + ": " + egl_error("eglCreatePbufferSurface"));
    if (!eglBindAPI(EGL_OPENGL_API)) fail(asked_by_ + ": " + egl_error("eglBindAPI(EGL_OPENGL_API)"));
    EGLint const context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                         EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                         EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, context_attributes);
    if (context_ == EGL_NO_CONTEXT) fail(asked_by_ + ": " + egl_error("eglCreateContext (OpenGL 3.3 core)"));
    if (!eglMakeCurrent(display_, surface_, surface_, context_)) fail(asked_by_ + ": " + egl_error("eglMakeCurrent"));
    glewExperimental = GL_TRUE;
    GLenum const status = glewInit();
    (void)glGetError();
    if (status != GLEW_OK && glGetString(GL_VERSION) == nullptr)
      fail(asked_by_ + ": cannot load OpenGL functions (GLEW): " +
           reinterpret_cast<const char*>(glewGetErrorString(status)));
  }

  ~EglSurface() override { release(); }

  void wait_events(double seconds) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(seconds, 0.01)));  // no input here
  }

  int width() const override { return width_; }
  int height() const override { return height_; }
  bool should_close() const override { return false; }
  Input poll() override { return {}; }
  void present() override { glFinish(); }
  void set_vsync(bool) override {}
  bool set_fullscreen(bool) override { return false; }
  std::string describe() const override { return "EGL pbuffer (" + source_ + ")"; }

 private:
  // The first EGL device that initialises, through EGL_EXT_device_enumeration + platform_device.
  EGLDisplay device_display() {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!query_devices || !platform_display) return EGL_NO_DISPLAY;
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (!query_devices(16, devices, &count)) return EGL_NO_DISPLAY;
    for (EGLint i = 0; i < count; ++i) {
      EGLDisplay d = platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
      if (d != EGL_NO_DISPLAY && eglInitialize(d, nullptr, nullptr)) {
        char const* vendor = eglQueryString(d, EGL_VENDOR);
        source_ = "EGL device " + std::to_string(i) + ", " + (vendor ? vendor : "?");
        return d;
      }
    }
    return EGL_NO_DISPLAY;
  }

  [[noreturn]] void fail(const std::string& what) {
    release();
    throw RuntimeFailure(what);
  }

  void release() {
    if (display_ == EGL_NO_DISPLAY) return;
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
    if (surface_ != EGL_NO_SURFACE) eglDestroySurface(display_, surface_);
    eglTerminate(display_);
    display_ = EGL_NO_DISPLAY;
  }

  int width_, height_;
  std::string asked_by_;  // the option that asked for EGL rendering, which messages name
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLSurface surface_ = EGL_NO_SURFACE;
  EGLContext context_ = EGL_NO_CONTEXT;
  std::string source_;
};

}  // namespace

std::unique_ptr<Surface> open_offscreen(int width, int height, const std::string& asked_by) {
  return std::make_unique<EglSurface>(width, height, asked_by);
}

}  // namespace nbody::render
