// render/body_renderer.h - draws N bodies as additive point sprites from two vertex buffers: linear
// radiance meant for HdrPipeline's float target (render/hdr.h), which tone maps it.
#pragma once

#include <glm/glm.hpp>

#include <cstddef>
#include <vector>

#include "render/colors.h"
#include "render/gl_objects.h"

namespace nbody::render {

class BodyRenderer {
 public:
  BodyRenderer();  // needs a current GL context; loads the shaders

  // Sizes the buffers for n bodies (positions are float4: x, y, z, m).
  void resize(std::size_t n);
  void upload_positions(const float* xyzw, std::size_t n);
  void upload_colors(const std::vector<Rgba>& colors);
  GLuint position_buffer() const { return positions_.get(); }  // for CUDA-GL interop
  GLuint color_buffer() const { return colors_.get(); }

  // point_size: sprite diameter in pixels for a body at reference_depth from the eye, in proportion
  // nearer or farther, capped at max_sprite_pixels(point_size) (render/camera.h). brightness:
  // linear radiance at a sprite's centre for a white body (colours are sRGB values, decoded to linear
  // in the shader); sprites add up without limit in a float target and are tone mapped afterwards.
  // Drawn into the 8-bit default framebuffer instead, sums above 1 clip.
  void draw(const glm::mat4& view, const glm::mat4& projection, float point_size, float reference_depth,
            float brightness);

 private:
  Program program_;
  VertexArray vao_;
  Buffer positions_, colors_;
  std::size_t count_ = 0;
};

}  // namespace nbody::render
