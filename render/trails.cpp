// render/trails.cpp - the trail ring (GPU-to-GPU copies) and its instanced line drawing.
#include "render/trails.h"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.h"

namespace nbody::render {
namespace {

int checked_length(int length) {
  if (length < 2) throw InputError("trail length " + std::to_string(length) + ": must be at least 2 frames");
  return length;
}

}  // namespace

TrailPlan plan_trails(std::size_t bodies, bool software) {
  std::size_t const n = std::max<std::size_t>(bodies, 1);
  std::size_t const budget_bytes = std::size_t(256) << 20;
  std::size_t slots = std::min<std::size_t>(budget_bytes / (TrailRenderer::kBytesPerBody * n), kTrailFrames);
  if (software) slots = std::min(slots, kSoftwareSegments / n + 1);  // slots - 1 lines per body
  TrailPlan p;
  p.length = int(std::max<std::size_t>(slots, 2));
  p.stride = std::max(1, kTrailFrames / (p.length - 1));
  if (!software) p.stride = 1;  // the GPU path as before: one slot a frame
  return p;
}

bool software_renderer() {
  auto const* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  std::string const name = renderer ? renderer : "";
  for (const char* cpu : {"llvmpipe", "softpipe", "SwiftShader", "Software Rasterizer"})
    if (name.find(cpu) != std::string::npos) return true;
  return false;
}

TrailRenderer::TrailRenderer(int length, int stride)
    : program_(load_program(assets_dir() + "/shaders/trails.vert", assets_dir() + "/shaders/trails.frag")),
      vao_(make_vertex_array()),
      ring_(make_buffer()),
      pairs_(make_buffer()),
      colors_(make_texture()),
      length_(checked_length(length)),
      stride_(std::max(stride, 1)) {
  view_location_ = glGetUniformLocation(program_.get(), "view");
  projection_location_ = glGetUniformLocation(program_.get(), "projection");
  newest_location_ = glGetUniformLocation(program_.get(), "newest_slot");
  length_location_ = glGetUniformLocation(program_.get(), "trail_length");
  brightness_location_ = glGetUniformLocation(program_.get(), "brightness");
  bodies_location_ = glGetUniformLocation(program_.get(), "bodies");
  colored_location_ = glGetUniformLocation(program_.get(), "colored");
  colors_location_ = glGetUniformLocation(program_.get(), "colors");
  glBindVertexArray(vao_.get());
  glEnableVertexAttribArray(0);  // a position in the ring
  glBindVertexArray(0);
  check_gl("creating the trail buffers");
}

void TrailRenderer::resize(std::size_t bodies) {
  if (bodies == bodies_) return;
  bodies_ = bodies;
  clear();
  glBindBuffer(GL_COPY_WRITE_BUFFER, ring_.get());
  glBufferData(GL_COPY_WRITE_BUFFER, GLsizeiptr(bytes()), nullptr, GL_DYNAMIC_COPY);
  std::vector<GLuint> pairs(4 * bodies);
  GLuint const n = GLuint(bodies), last = GLuint(length_ - 1) * n;
  for (GLuint i = 0; i < n; ++i) {
    pairs[2 * i] = i + n, pairs[2 * i + 1] = i;                // slot s + 1 to slot s (base vertex s x n)
    pairs[2 * n + 2 * i] = i, pairs[2 * n + 2 * i + 1] = i + last;  // slot 0 to the last slot
  }
  glBindBuffer(GL_COPY_WRITE_BUFFER, pairs_.get());
  glBufferData(GL_COPY_WRITE_BUFFER, GLsizeiptr(pairs.size() * sizeof(GLuint)), pairs.data(), GL_STATIC_DRAW);
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  check_gl("sizing the trail ring");
}

void TrailRenderer::clear() {
  next_ = 0;
  recorded_ = 0;
  since_advance_ = 0;
}

void TrailRenderer::record(GLuint position_buffer, std::size_t bodies) {
  resize(bodies);
  if (bodies_ == 0) return;
  std::size_t const slot_bytes = bodies_ * kBytesPerBody;
  bool const advance = recorded_ == 0 || since_advance_ + 1 >= stride_;
  int const slot = advance ? next_ : (next_ - 1 + length_) % length_;
  glBindBuffer(GL_COPY_READ_BUFFER, position_buffer);
  glBindBuffer(GL_COPY_WRITE_BUFFER, ring_.get());
  glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, GLintptr(std::size_t(slot) * slot_bytes),
                      GLsizeiptr(slot_bytes));
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  if (advance) {
    next_ = (next_ + 1) % length_;
    if (recorded_ < length_) ++recorded_;
    since_advance_ = 0;
  } else {
    ++since_advance_;
  }
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
  glUniform1i(bodies_location_, GLint(bodies_));
  glUniform1i(newest_location_, (next_ - 1 + length_) % length_);
  glUniform1i(colored_location_, color_buffer != 0);
  glUniform1i(colors_location_, 0);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_BUFFER, colors_.get());
  if (color_buffer != 0) glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, color_buffer);
  glBindVertexArray(vao_.get());
  glBindBuffer(GL_ARRAY_BUFFER, ring_.get());
  glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, pairs_.get());  // part of the vertex array's state
  GLsizei const count = GLsizei(2 * bodies_);
  int const newest = (next_ - 1 + length_) % length_;
  // Each pair of slots (newer, newer - 1) from the newest back to the oldest recorded.
  for (int age = 0; age + 1 < recorded_; ++age) {
    int const newer = (newest - age + length_) % length_;
    if (newer > 0)
      glDrawElementsBaseVertex(GL_LINES, count, GL_UNSIGNED_INT, nullptr, GLint(std::size_t(newer - 1) * bodies_));
    else  // slot 0 to the last slot: the second run of indices
      glDrawElementsBaseVertex(GL_LINES, count, GL_UNSIGNED_INT,
                               reinterpret_cast<const void*>(2 * bodies_ * sizeof(GLuint)), 0);
  }
  glBindTexture(GL_TEXTURE_BUFFER, 0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  glBindVertexArray(0);
  glUseProgram(0);
  glDisable(GL_BLEND);
#ifndef NDEBUG
  check_gl("drawing the trails");
#endif
}

}  // namespace nbody::render
