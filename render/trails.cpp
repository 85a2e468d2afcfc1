// render/trails.cpp - the trail ring (GPU-to-GPU copies) and its instanced line drawing.
#include "render/trails.h"

#include <glm/gtc/type_ptr.hpp>

#include <string>

#include "core/errors.h"

namespace nbody::render {
namespace {

int checked_length(int length) {
  if (length < 2) throw InputError("trail length " + std::to_string(length) + ": must be at least 2 frames");
  return length;
}

}  // namespace

TrailRenderer::TrailRenderer(int length)
    : program_(load_program(assets_dir() + "/shaders/trails.vert", assets_dir() + "/shaders/trails.frag")),
      vao_(make_vertex_array()),
      ring_(make_buffer()),
      length_(checked_length(length)) {
  view_location_ = glGetUniformLocation(program_.get(), "view");
  projection_location_ = glGetUniformLocation(program_.get(), "projection");
  age_location_ = glGetUniformLocation(program_.get(), "age");
  length_location_ = glGetUniformLocation(program_.get(), "trail_length");
  brightness_location_ = glGetUniformLocation(program_.get(), "brightness");
  glBindVertexArray(vao_.get());
  for (GLuint attribute = 0; attribute < 3; ++attribute) glVertexAttribDivisor(attribute, 1);  // per body
  glEnableVertexAttribArray(0);  // newer end
  glEnableVertexAttribArray(1);  // older end
  glBindVertexArray(0);
  check_gl("creating the trail buffers");
}

void TrailRenderer::resize(std::size_t bodies) {
  if (bodies == bodies_) return;
  bodies_ = bodies;
  clear();
  glBindBuffer(GL_COPY_WRITE_BUFFER, ring_.get());
  glBufferData(GL_COPY_WRITE_BUFFER, GLsizeiptr(bytes()), nullptr, GL_DYNAMIC_COPY);
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  check_gl("sizing the trail ring");
}

void TrailRenderer::clear() {
  next_ = 0;
  recorded_ = 0;
}

void TrailRenderer::record(GLuint position_buffer, std::size_t bodies) {
  resize(bodies);
  if (bodies_ == 0) return;
  std::size_t const slot_bytes = bodies_ * kBytesPerBody;
  glBindBuffer(GL_COPY_READ_BUFFER, position_buffer);
  glBindBuffer(GL_COPY_WRITE_BUFFER, ring_.get());
  glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, GLintptr(std::size_t(next_) * slot_bytes),
                      GLsizeiptr(slot_bytes));
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  next_ = (next_ + 1) % length_;
  if (recorded_ < length_) ++recorded_;
#ifndef NDEBUG
  check_gl("recording a trail frame");
#endif
}

void TrailRenderer::draw(const glm::mat4& view, const glm::mat4& projection, GLuint color_buffer, float brightness) {
  if (recorded_ < 2 || bodies_ == 0) return;
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE);  // additive linear radiance, as the sprites
  glDisable(GL_DEPTH_TEST);
  glUseProgram(program_.get());
  glUniformMatrix4fv(view_location_, 1, GL_FALSE, glm::value_ptr(view));
  glUniformMatrix4fv(projection_location_, 1, GL_FALSE, glm::value_ptr(projection));
  glUniform1f(length_location_, float(length_));
  glUniform1f(brightness_location_, brightness);
  glBindVertexArray(vao_.get());
  if (color_buffer != 0) {
    glBindBuffer(GL_ARRAY_BUFFER, color_buffer);
    glVertexAttribPointer(2, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
    glEnableVertexAttribArray(2);
  } else {
    glDisableVertexAttribArray(2);
    glVertexAttrib4f(2, 1.0f, 1.0f, 1.0f, 1.0f);  // the current value of a disabled attribute: white
  }
  glBindBuffer(GL_ARRAY_BUFFER, ring_.get());
  std::size_t const slot_bytes = bodies_ * kBytesPerBody;
  auto const slot_offset = [&](int age) {  // where the frame `age` records ago lies in the ring
    int const slot = ((next_ - 1 - age) % length_ + length_) % length_;
    return reinterpret_cast<const void*>(std::size_t(slot) * slot_bytes);
  };
  for (int age = 0; age + 1 < recorded_; ++age) {
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 0, slot_offset(age));
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, 0, slot_offset(age + 1));
    glUniform1f(age_location_, float(age));
    glDrawArraysInstanced(GL_LINES, 0, 2, GLsizei(bodies_));
  }
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  glBindVertexArray(0);
  glUseProgram(0);
  glDisable(GL_BLEND);
#ifndef NDEBUG
  check_gl("drawing the trails");
#endif
}

}  // namespace nbody::render
