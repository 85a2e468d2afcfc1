// render/frame.cpp - viewport, clear and glFinish.
#include "render/frame.h"

#include <GL/glew.h>

namespace nbody::render {

void begin_frame(int width, int height) {
  glViewport(0, 0, width, height);
  glClearColor(0.0f, 0.0f, 0.02f, 1.0f);  // near-black, a touch of blue
  glClear(GL_COLOR_BUFFER_BIT);
}

void finish_frame() { glFinish(); }

}  // namespace nbody::render
