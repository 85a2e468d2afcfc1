// render/screenshot.h - the current framebuffer to a PNG file (stb_image_write).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nbody::render {

// RGB pixels of the current read framebuffer, top row first.
std::vector<std::uint8_t> read_pixels(int width, int height);

// Writes RGB pixels as a PNG, whole or not at all (write_file_atomically).
void write_png(const std::string& path, const std::vector<std::uint8_t>& rgb, int width, int height);

}  // namespace nbody::render
