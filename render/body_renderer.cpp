// render/body_renderer.cpp - point sprites with soft falloff and additive blending of linear radiance.
#include "render/body_renderer.h"

#include <glm/gtc/type_ptr.hpp>

#include "render/camera.h"

namespace nbody::render {

BodyRenderer::BodyRenderer()
    : program_(load_program(assets_dir() + "/shaders/bodies.vert", assets_dir() + "/shaders/bodies.frag")),
      vao_(make_vertex_array()),
      positions_(make_buffer()),
      colors_(make_buffer()) {
  glBindVertexArray(vao_.get());
  glBindBuffer(GL_ARRAY_BUFFER, positions_.get());
  glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
  glEnableVertexAttribArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, colors_.get());
  glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
  glEnableVertexAttribArray(1);
  glBindVertexArray(0);
  check_gl("creating the body buffers");
}

void BodyRenderer::resize(std::size_t n) {
  if (n == count_) return;
  count_ = n;
  glBindBuffer(GL_ARRAY_BUFFER, positions_.get());
  glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(n * 4 * sizeof(float)), nullptr, GL_DYNAMIC_DRAW);
  glBindBuffer(GL_ARRAY_BUFFER, colors_.get());
  glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(n * 4 * sizeof(float)), nullptr, GL_DYNAMIC_DRAW);
  check_gl("sizing the body buffers");
}

void BodyRenderer::upload_positions(const float* xyzw, std::size_t n) {
  resize(n);
  glBindBuffer(GL_ARRAY_BUFFER, positions_.get());
  glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(n * 4 * sizeof(float)), xyzw);
}

void BodyRenderer::upload_colors(const std::vector<Rgba>& colors) {
  resize(colors.size());
  glBindBuffer(GL_ARRAY_BUFFER, colors_.get());
  glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(colors.size() * sizeof(Rgba)), colors.data());
}

void BodyRenderer::draw(const glm::mat4& view, const glm::mat4& projection, float point_size, float reference_depth,
                        float brightness) {
  glEnable(GL_PROGRAM_POINT_SIZE);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE);  // additive: radiance sums, dense regions glow (float targets do not clamp)
  glDisable(GL_DEPTH_TEST);
  glUseProgram(program_.get());
  glUniformMatrix4fv(glGetUniformLocation(program_.get(), "view"), 1, GL_FALSE, glm::value_ptr(view));
  glUniformMatrix4fv(glGetUniformLocation(program_.get(), "projection"), 1, GL_FALSE, glm::value_ptr(projection));
  glUniform1f(glGetUniformLocation(program_.get(), "point_size"), point_size);
  glUniform1f(glGetUniformLocation(program_.get(), "reference_depth"), reference_depth);
  glUniform1f(glGetUniformLocation(program_.get(), "max_point_size"), max_sprite_pixels(point_size));
  glUniform1f(glGetUniformLocation(program_.get(), "brightness"), brightness);
  glBindVertexArray(vao_.get());
  glDrawArrays(GL_POINTS, 0, GLsizei(count_));
  glBindVertexArray(0);
  glUseProgram(0);
  glDisable(GL_BLEND);
#ifndef NDEBUG
  check_gl("drawing the bodies");
#endif
}

}  // namespace nbody::render
