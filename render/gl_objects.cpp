// render/gl_objects.cpp - shader loading and GL error checks.
#include "render/gl_objects.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace nbody::render {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw RuntimeFailure("cannot read shader " + path + " (set NBODY_ASSETS to the assets folder)");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

GLuint compile(GLenum type, const std::string& path) {
  std::string const source = read_file(path);
  GLuint const shader = glCreateShader(type);
  const char* text = source.c_str();
  glShaderSource(shader, 1, &text, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetShaderInfoLog(shader, sizeof log, nullptr, log);
    glDeleteShader(shader);
    throw RuntimeFailure(path + ": shader does not compile: " + log);
  }
  return shader;
}

}  // namespace

std::string assets_dir() {
  if (char const* env = std::getenv("NBODY_ASSETS"); env && *env) return env;
  return NBODY_ASSETS_DIR;
}

Program load_program(const std::string& vertex_path, const std::string& fragment_path) {
  GLuint const vs = compile(GL_VERTEX_SHADER, vertex_path);
  GLuint fs = 0;
  try {
    fs = compile(GL_FRAGMENT_SHADER, fragment_path);
  } catch (...) {
    glDeleteShader(vs);
    throw;
  }
  Program program(glCreateProgram());
  glAttachShader(program.get(), vs);
  glAttachShader(program.get(), fs);
  glLinkProgram(program.get());
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program.get(), GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetProgramInfoLog(program.get(), sizeof log, nullptr, log);
    throw RuntimeFailure(vertex_path + " + " + fragment_path + ": program does not link: " + log);
  }
  return program;
}

void check_gl(const char* what) {
  GLenum const e = glGetError();
  if (e != GL_NO_ERROR) {
    std::ostringstream s;
    s << "OpenGL error 0x" << std::hex << e << " in " << what;
    throw RuntimeFailure(s.str());
  }
}

}  // namespace nbody::render
