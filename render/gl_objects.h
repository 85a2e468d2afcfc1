// render/gl_objects.h - move-only owners of GL names; they may be declared before a context
// exists (empty), and must be destroyed while their context is current.
#pragma once

#include <GL/glew.h>

#include <string>
#include <utility>

namespace nbody::render {

template <void (*Delete)(GLuint)>
class GlName {
 public:
  GlName() = default;
  explicit GlName(GLuint name) : name_(name) {}
  GlName(GlName&& o) noexcept : name_(std::exchange(o.name_, 0)) {}
  GlName& operator=(GlName&& o) noexcept {
    if (this != &o) {
      reset();
      name_ = std::exchange(o.name_, 0);
    }
    return *this;
  }
  ~GlName() { reset(); }
  GlName(const GlName&) = delete;
  GlName& operator=(const GlName&) = delete;
  GLuint get() const { return name_; }
  void reset() {
    if (name_) Delete(name_);
    name_ = 0;
  }

 private:
  GLuint name_ = 0;
};

inline void delete_buffer(GLuint n) { glDeleteBuffers(1, &n); }
inline void delete_vertex_array(GLuint n) { glDeleteVertexArrays(1, &n); }
inline void delete_program(GLuint n) { glDeleteProgram(n); }
inline void delete_framebuffer(GLuint n) { glDeleteFramebuffers(1, &n); }
inline void delete_texture(GLuint n) { glDeleteTextures(1, &n); }

using Buffer = GlName<delete_buffer>;
using VertexArray = GlName<delete_vertex_array>;
using Program = GlName<delete_program>;
using Framebuffer = GlName<delete_framebuffer>;
using Texture = GlName<delete_texture>;

// New names, owned from the moment they exist: owners call these in their member initialisers.
// They need a current context.
inline Buffer make_buffer() {
  GLuint n = 0;
  glGenBuffers(1, &n);
  return Buffer(n);
}
inline VertexArray make_vertex_array() {
  GLuint n = 0;
  glGenVertexArrays(1, &n);
  return VertexArray(n);
}
inline Framebuffer make_framebuffer() {
  GLuint n = 0;
  glGenFramebuffers(1, &n);
  return Framebuffer(n);
}
inline Texture make_texture() {
  GLuint n = 0;
  glGenTextures(1, &n);
  return Texture(n);
}

// Compiles and links a program from two shader files; throws RuntimeFailure with the GL log.
Program load_program(const std::string& vertex_path, const std::string& fragment_path);

// Where the shaders are: $NBODY_ASSETS, else the source tree's assets/ (set at build time).
std::string assets_dir();

// Throws RuntimeFailure naming `what` and the GL error, if one is pending.
void check_gl(const char* what);

}  // namespace nbody::render
