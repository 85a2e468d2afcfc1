// render/screenshot.cpp - framebuffer read-back and PNG output.
#include "render/screenshot.h"

#include <GL/glew.h>
#include <stb/stb_image_write.h>

#include <cstring>

#include "core/atomic_file.h"

namespace nbody::render {

std::vector<std::uint8_t> read_pixels(int width, int height) {
  std::vector<std::uint8_t> bottom_up(std::size_t(width) * std::size_t(height) * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, bottom_up.data());
  std::vector<std::uint8_t> top_down(bottom_up.size());
  std::size_t const row = std::size_t(width) * 3;
  for (int y = 0; y < height; ++y)
    std::memcpy(&top_down[std::size_t(y) * row], &bottom_up[std::size_t(height - 1 - y) * row], row);
  return top_down;
}

void write_png(const std::string& path, const std::vector<std::uint8_t>& rgb, int width, int height) {
  write_file_atomically(path, "the PNG", [&](const std::string& tmp) {
    return stbi_write_png(tmp.c_str(), width, height, 3, rgb.data(), width * 3) != 0;
  });
}

}  // namespace nbody::render
