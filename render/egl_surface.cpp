// render/egl_surface.cpp - offscreen rendering with no window system: an EGL pbuffer on a GPU
// device (EGL_EXT_platform_device, the usual state of a GPU server), else the default display.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glew.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "render/surface.h"

namespace nbody::render {
namespace {

std::string egl_error(const char* what) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s failed (EGL error 0x%04x)", what, eglGetError());
  return buf;
}

class EglSurface final : public Surface {
 public:
  EglSurface(int width, int height) : width_(width), height_(height) {
    display_ = device_display();
    if (display_ == EGL_NO_DISPLAY) {
      display_ = eglGetDisplay(EGL_DEFAULT_DISPLAY);
      if (display_ == EGL_NO_DISPLAY || !eglInitialize(display_, nullptr, nullptr))
        throw RuntimeFailure("--offscreen: no EGL display: " + egl_error("eglInitialize"));
      source_ = "default display";
    }
    EGLint const config_attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                        EGL_RED_SIZE,     8,               EGL_GREEN_SIZE,      8,
                                        EGL_BLUE_SIZE,    8,               EGL_ALPHA_SIZE,      8,
                                        EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    if (!eglChooseConfig(display_, config_attributes, &config, 1, &count) || count == 0)
      fail("--offscreen: no EGL config for an OpenGL pbuffer");
    EGLint const pbuffer_attributes[] = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE};
    surface_ = eglCreatePbufferSurface(display_, config, pbuffer_attributes);
    if (surface_ == EGL_NO_SURFACE) fail(egl_error("eglCreatePbufferSurface"));
    if (!eglBindAPI(EGL_OPENGL_API)) fail(egl_error("eglBindAPI(EGL_OPENGL_API)"));
    EGLint const context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                         EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                         EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, context_attributes);
    if (context_ == EGL_NO_CONTEXT) fail(egl_error("eglCreateContext (OpenGL 3.3 core)"));
    if (!eglMakeCurrent(display_, surface_, surface_, context_)) fail(egl_error("eglMakeCurrent"));
    glewExperimental = GL_TRUE;
    GLenum const status = glewInit();
    (void)glGetError();
    if (status != GLEW_OK && glGetString(GL_VERSION) == nullptr)
      fail(std::string("--offscreen: cannot load OpenGL functions (GLEW): ") +
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
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLSurface surface_ = EGL_NO_SURFACE;
  EGLContext context_ = EGL_NO_CONTEXT;
  std::string source_;
};

}  // namespace

std::unique_ptr<Surface> open_offscreen(int width, int height) { return std::make_unique<EglSurface>(width, height); }

}  // namespace nbody::render
