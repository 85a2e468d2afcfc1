// render/trails.h - fading trails behind the bodies: a ring of the last `length` position buffers,
// kept on the GPU, drawn as line segments of linear radiance into the HDR target (render/hdr.h).
#pragma once

#include <glm/glm.hpp>

#include <cstddef>

#include "render/gl_objects.h"

namespace nbody::render {

// How long the trails are: `length` slots in the ring, a new slot every `stride` frames (between two,
// the newest slot follows the bodies, so a trail always starts at its body). Every plan spans about
// kTrailFrames frames. On a GPU: as many slots as 256 MiB of ring hold, at most kTrailFrames, one a
// frame. On a software renderer (Mesa's llvmpipe: each line costs 0.2 to 0.5 us of a core, more for
// longer ones), at most kSoftwareSegments lines a frame: at 4,096 bodies 17 slots 16 frames apart
// instead of 256 - a sixteenth of the lines, the same span.
struct TrailPlan {
  int length = 2;
  int stride = 1;
};
inline constexpr int kTrailFrames = 256;
inline constexpr std::size_t kSoftwareSegments = std::size_t(1) << 16;
TrailPlan plan_trails(std::size_t bodies, bool software_renderer);
// Whether the current GL context renders on the CPU (llvmpipe, softpipe, SwiftShader).
bool software_renderer();

class TrailRenderer {
 public:
  // length: frames remembered, at least 2 (InputError otherwise). Memory: length x bodies x 16
  // bytes of GPU memory for the ring (e.g. 64 frames of 65,536 bodies: 64 MiB; of 2 bodies: 2 KiB)
  // and 16 bytes a body of indices, allocated by resize(); nothing per frame.
  explicit TrailRenderer(int length, int stride = 1);  // needs a current GL context; loads the shaders

  // Sizes the ring for `bodies` (a no-op when unchanged); forgets what was recorded.
  void resize(std::size_t bodies);
  // Copies the current positions - `bodies` float4 (x, y, z, m), BodyRenderer::position_buffer() -
  // into the ring, GPU to GPU (glCopyBufferSubData): into the next slot every `stride` frames, over
  // the newest slot in between. Resizes first when `bodies` changed.
  void record(GLuint position_buffer, std::size_t bodies);
  // Forgets the recorded frames (a new scenario, a jump), keeping the memory.
  void clear();

  // Adds the trails to the bound framebuffer (additive, GL_ONE, GL_ONE): for each pair of
  // consecutive recorded frames one line per body, from the newer to the older position. A vertex of
  // age a frames (0 = newest) has radiance brightness x colour x (1 - a / length): the newest end at
  // `brightness` (linear radiance for a white body), the oldest at 1 / length of it. color_buffer:
  // per-body float4 sRGB colours (BodyRenderer::color_buffer()), or 0 for white.
  //
  // How: one indexed draw of GL_LINES per pair of consecutive slots, 2 x bodies indices each, no
  // instancing. The indices (i + bodies, i) for i < bodies join slot s + 1 to slot s when drawn with
  // base vertex s x bodies (glDrawElementsBaseVertex); a second run of indices joins slot 0 to the
  // last slot, where the ring wraps. The vertex shader finds a vertex's slot, hence its age, and its
  // body, hence its colour (read from color_buffer as a buffer texture), from gl_VertexID. Instanced,
  // one instance per body, the same picture cost Mesa's llvmpipe 10 times as much: it runs its whole
  // vertex pipeline once per instance, for 2 vertices each time.
  void draw(const glm::mat4& view, const glm::mat4& projection, GLuint color_buffer, float brightness);

  int length() const { return length_; }
  int stride() const { return stride_; }
  std::size_t bodies() const { return bodies_; }
  int recorded() const { return recorded_; }  // frames in the ring, at most length()
  std::size_t bytes() const { return std::size_t(length_) * bodies_ * kBytesPerBody; }

  static constexpr std::size_t kBytesPerBody = 4 * sizeof(float);

 private:
  Program program_;
  VertexArray vao_;
  Buffer ring_;          // length_ slots of bodies_ float4, slot s at s x bodies_ x 16 bytes
  Buffer pairs_;         // 4 x bodies_ indices: (i + bodies_, i), then (i, i + (length_ - 1) x bodies_)
  Texture colors_;       // a buffer texture over the colour buffer draw() is given
  int length_;
  int stride_;
  int since_advance_ = 0;  // frames recorded over the newest slot since it was started
  std::size_t bodies_ = 0;
  int next_ = 0;         // slot the next record() writes
  int recorded_ = 0;
  GLint view_location_ = -1, projection_location_ = -1, newest_location_ = -1, length_location_ = -1,
        brightness_location_ = -1, bodies_location_ = -1, colored_location_ = -1, colors_location_ = -1;
};

}  // namespace nbody::render
