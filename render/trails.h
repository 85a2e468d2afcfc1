// render/trails.h - fading trails behind the bodies: a ring of the last `length` position buffers,
// kept on the GPU, drawn as line segments of linear radiance into the HDR target (render/hdr.h).
#pragma once

#include <glm/glm.hpp>

#include <cstddef>

#include "render/gl_objects.h"

namespace nbody::render {

class TrailRenderer {
 public:
  // length: frames remembered, at least 2 (InputError otherwise). Memory: length x bodies x 16
  // bytes of GPU memory, one buffer, allocated by resize() (e.g. 64 frames of 65,536 bodies: 64 MiB;
  // of 2 bodies: 2 KiB), and nothing else: no index buffer, no per-frame allocation.
  explicit TrailRenderer(int length);  // needs a current GL context; loads the shaders

  // Sizes the ring for `bodies` (a no-op when unchanged); forgets what was recorded.
  void resize(std::size_t bodies);
  // Copies the current positions - `bodies` float4 (x, y, z, m), BodyRenderer::position_buffer() -
  // into the ring's next slot, GPU to GPU (glCopyBufferSubData). Resizes first when `bodies` changed.
  void record(GLuint position_buffer, std::size_t bodies);
  // Forgets the recorded frames (a new scenario, a jump), keeping the memory.
  void clear();

  // Adds the trails to the bound framebuffer (additive, GL_ONE, GL_ONE): for each pair of
  // consecutive recorded frames one line per body, from the newer to the older position. A vertex of
  // age a frames (0 = newest) has radiance brightness x colour x (1 - a / length): the newest end at
  // `brightness` (linear radiance for a white body), the oldest at 1 / length of it. color_buffer:
  // per-body float4 sRGB colours (BodyRenderer::color_buffer()), or 0 for white.
  //
  // How: instancing, one instance per body and 2 vertices (GL_LINES) per instance, one draw call per
  // age. The newer and older endpoints are two vertex attributes with divisor 1 pointing into the
  // ring at the two slots' offsets, so the ring's wrap-around costs nothing and no index buffer (which
  // would take another 2 x length x bodies x 4 bytes) is needed; it is plain vertex fetch in GL 3.3
  // core, with none of texture buffers' size limits. The cost is length - 1 draw calls per frame.
  void draw(const glm::mat4& view, const glm::mat4& projection, GLuint color_buffer, float brightness);

  int length() const { return length_; }
  std::size_t bodies() const { return bodies_; }
  int recorded() const { return recorded_; }  // frames in the ring, at most length()
  std::size_t bytes() const { return std::size_t(length_) * bodies_ * kBytesPerBody; }

  static constexpr std::size_t kBytesPerBody = 4 * sizeof(float);

 private:
  Program program_;
  VertexArray vao_;
  Buffer ring_;          // length_ slots of bodies_ float4, slot s at s x bodies_ x 16 bytes
  int length_;
  std::size_t bodies_ = 0;
  int next_ = 0;         // slot the next record() writes
  int recorded_ = 0;
  GLint view_location_ = -1, projection_location_ = -1, age_location_ = -1, length_location_ = -1,
        brightness_location_ = -1;
};

}  // namespace nbody::render
