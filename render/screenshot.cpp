// render/screenshot.cpp - framebuffer read-back and PNG output.
#include "render/screenshot.h"

#include <GL/glew.h>
#include <stb/stb_image_write.h>

#include <cstring>
#include <string>

#include "core/atomic_file.h"
#include "core/errors.h"

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
  // Encoded in memory, then written and read back here: stb's own file writer ignores a failed write, so a full disk
  // gave an empty or truncated PNG with a valid signature, published over the last good one.
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), std::size_t(size));
  };
  if (stbi_write_png_to_func(append, &png, width, height, 3, rgb.data(), width * 3) == 0 || png.empty())
    throw RuntimeFailure(path + ": cannot encode the PNG (" + std::to_string(width) + " x " + std::to_string(height) +
                         " pixels)");
  write_bytes_file(path, png, "the PNG");
}

}  // namespace nbody::render
