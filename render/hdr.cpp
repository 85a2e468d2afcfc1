// render/hdr.cpp - float target, GPU luminance measurement (log pass + mipmaps, one texel read back)
// and the tone-mapping pass.
#include "render/hdr.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/errors.h"

namespace nbody::render {
namespace {

// Mip levels down to 1 x 1 for a w x h texture (each level halves, rounding down, as GL does).
// The largest power of two that is at most half of `size` (at least 1): the measure target's side.
// Powers of two halve exactly down to one texel, so its mipmaps are true averages of every texel
// (odd sizes would drop a row or column at some level, and with it, perhaps, the brightest pixel).
int measure_side(int size) {
  int side = 1;
  while (2 * side <= size / 2) side *= 2;
  return side;
}

int mip_levels(int w, int h) {
  int levels = 1;
  for (int s = std::max(w, h); s > 1; s /= 2) ++levels;
  return levels;
}

// `allocated`: the GL error the target's texture was allocated with (GL_NO_ERROR where it was): a texture too large
// for the OpenGL (its side past GL_MAX_TEXTURE_SIZE, or more than its memory holds: GL_OUT_OF_MEMORY) is said as the
// size it is, not as floating-point rendering missing, which is what an incomplete target otherwise means.
void require_complete(const char* which, GLenum allocated, int width, int height) {
  GLenum const status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  if (status == GL_FRAMEBUFFER_COMPLETE) return;
  std::ostringstream s;
  GLint largest = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &largest);
  // (Another allocation error, an unsupported format's, is the float rendering's own: the message below.)
  if (allocated == GL_OUT_OF_MEMORY || std::max(width, height) > largest) {
    s << "HDR pipeline: this OpenGL cannot hold the " << which << " target of " << width << " x " << height
      << " floating-point pixels (" << (allocated == GL_OUT_OF_MEMORY ? "out of memory" : "too large")
      << "; its largest texture side is " << largest << "): give a smaller picture (--width and --height, or a "
      << "smaller window or page)";
    throw RuntimeFailure(s.str());
  }
  s << "HDR pipeline: the " << which << " framebuffer is incomplete (status 0x" << std::hex << status
    << "): this OpenGL cannot render to floating-point textures";
  throw RuntimeFailure(s.str());
}

// Allocates the bound 2D texture's `level` and gives the GL error that came with it (an error left before is
// cleared first, so that it is the allocation's).
GLenum allocate_level(int level, GLenum format, int width, int height) {
  while (glGetError() != GL_NO_ERROR) {
  }
  glTexImage2D(GL_TEXTURE_2D, level, GLint(format), width, height, 0, GL_RGBA, GL_FLOAT, nullptr);
  return glGetError();
}

// A texture sampled only with texelFetch or read back: no filtering, no wrapping.
void set_plain_sampling() {
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

}  // namespace

HdrPipeline::HdrPipeline()
    : tone_map_program_(load_program(assets_dir() + "/shaders/tonemap.vert", assets_dir() + "/shaders/tonemap.frag")),
      measure_program_(
          load_program(assets_dir() + "/shaders/tonemap.vert", assets_dir() + "/shaders/log_luminance.frag")),
      empty_(make_vertex_array()),
      color_(make_texture()),
      log_luminance_(make_texture()),
      scene_target_(make_framebuffer()),
      measure_target_(make_framebuffer()) {
  glUseProgram(tone_map_program_.get());
  glUniform1i(glGetUniformLocation(tone_map_program_.get(), "scene"), 0);
  exposure_location_ = glGetUniformLocation(tone_map_program_.get(), "exposure");
  white_location_ = glGetUniformLocation(tone_map_program_.get(), "white");
  background_location_ = glGetUniformLocation(tone_map_program_.get(), "background");
  glUseProgram(measure_program_.get());
  glUniform1i(glGetUniformLocation(measure_program_.get(), "scene"), 0);
  glUniform1f(glGetUniformLocation(measure_program_.get(), "lit_luminance"), kLitLuminance);
  reference_location_ = glGetUniformLocation(measure_program_.get(), "reference");
  cells_location_ = glGetUniformLocation(measure_program_.get(), "cells");
  scale_location_ = glGetUniformLocation(measure_program_.get(), "scale");
  glUseProgram(0);
  check_gl("creating the HDR pipeline");
}

void HdrPipeline::allocate(int width, int height) {
  width_ = width;
  height_ = height;
  GLint previous_framebuffer = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous_framebuffer);

  glBindTexture(GL_TEXTURE_2D, color_.get());
  set_plain_sampling();
  GLenum const allocated = allocate_level(0, kColorFormat, width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, scene_target_.get());
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, color_.get(), 0);
  require_complete("scene", allocated, width, height);

  // Every level allocated here, so glGenerateMipmap only writes into them, frame after frame.
  int const w = measure_side(width), h = measure_side(height);
  measure_width_ = w;
  measure_height_ = h;
  measure_levels_ = mip_levels(w, h);
  glBindTexture(GL_TEXTURE_2D, log_luminance_.get());
  set_plain_sampling();
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_BASE_LEVEL, 0);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, measure_levels_ - 1);
  GLenum measured = GL_NO_ERROR;
  for (int level = 0; level < measure_levels_; ++level)
    if (GLenum const e = allocate_level(level, GL_RGBA32F, std::max(1, w >> level), std::max(1, h >> level));
        measured == GL_NO_ERROR)
      measured = e;
  glBindFramebuffer(GL_FRAMEBUFFER, measure_target_.get());
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, log_luminance_.get(), 0);
  require_complete("luminance", measured, w, h);

  glBindTexture(GL_TEXTURE_2D, 0);
  glBindFramebuffer(GL_FRAMEBUFFER, GLuint(previous_framebuffer));
  check_gl("sizing the HDR targets");
}

void HdrPipeline::begin(int width, int height) {
  width = std::max(width, 1);
  height = std::max(height, 1);
  if (width != width_ || height != height_) allocate(width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, scene_target_.get());
  glViewport(0, 0, width_, height_);
  glClearColor(0.0f, 0.0f, 0.0f, 0.0f);
  glClear(GL_COLOR_BUFFER_BIT);
#ifndef NDEBUG
  check_gl("starting an HDR frame");
#endif
}

float HdrPipeline::end(float exposure) { return display(exposure, true); }

float HdrPipeline::show_again(float exposure) { return display(exposure, false); }

float HdrPipeline::display(float exposure, bool measure_first) {
  if (!(exposure > 0.0f) || !std::isfinite(exposure)) exposure = 1.0f;
  if (width_ == 0) return exposure;  // no begin() yet: nothing to show
  glDisable(GL_BLEND);
  glDisable(GL_DEPTH_TEST);
  glBindVertexArray(empty_.get());
  glActiveTexture(GL_TEXTURE0);
  if (measure_first) measure();  // first: this frame's white point shapes its curve
  tone_map(exposure);
  glBindVertexArray(0);
  glBindTexture(GL_TEXTURE_2D, 0);
  glUseProgram(0);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glViewport(0, 0, width_, height_);
#ifndef NDEBUG
  check_gl("showing an HDR frame");
#endif
  return exposure;
}

ToneCurve HdrPipeline::tone(float exposure, float brightness) const {
  return {brightness, exposure, std::max(white_luminance_ * exposure, kMinWhite),
          {kBackground[0], kBackground[1], kBackground[2]}};
}

void HdrPipeline::tone_map(float exposure) {
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glViewport(0, 0, width_, height_);
  glDisable(GL_FRAMEBUFFER_SRGB);  // the shader encodes sRGB itself
  glUseProgram(tone_map_program_.get());
  glUniform1f(exposure_location_, exposure);
  glUniform1f(white_location_, std::max(white_luminance_ * exposure, kMinWhite));
  glUniform3f(background_location_, kBackground[0], kBackground[1], kBackground[2]);
  glBindTexture(GL_TEXTURE_2D, color_.get());
  glDrawArrays(GL_TRIANGLES, 0, 3);
}

void HdrPipeline::measure() {
  glBindFramebuffer(GL_FRAMEBUFFER, measure_target_.get());
  glViewport(0, 0, measure_width_, measure_height_);
  glUseProgram(measure_program_.get());
  glUniform1f(reference_location_, reference_);
  glUniform2i(cells_location_, measure_width_, measure_height_);
  // Each texel sums its block of pixels, scaled so that the one-texel mean is the mean over pixels.
  glUniform1f(scale_location_, float(double(measure_width_) * measure_height_ / (double(width_) * height_)));
  glBindTexture(GL_TEXTURE_2D, color_.get());
  glDrawArrays(GL_TRIANGLES, 0, 3);
  glBindTexture(GL_TEXTURE_2D, log_luminance_.get());
  glGenerateMipmap(GL_TEXTURE_2D);
  // Means over the frame of (lit x log L, lit x log^2 L, lit, (L / reference)^8).
  float texel[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glGetTexImage(GL_TEXTURE_2D, measure_levels_ - 1, GL_RGBA, GL_FLOAT, texel);
  lit_fraction_ = std::clamp(texel[2], 0.0f, 1.0f);
  // Fewer lit pixels than one in 10^6 is an empty frame (and keeps the ratios meaningful).
  if (!(texel[2] > 1e-6f) || !std::isfinite(texel[0]) || !std::isfinite(texel[1])) {
    average_luminance_ = white_luminance_ = 0.0f;
    return;
  }
  float const mean = texel[0] / texel[2];
  float const spread = std::sqrt(std::max(texel[1] / texel[2] - mean * mean, 0.0f));
  average_luminance_ = std::exp(mean);
  // The 8-norm: (sum of L^8)^(1/8) is at least the brightest pixel and, where a few pixels are about
  // as bright, little more. The log-normal estimate stands in where the 8th powers were out of range.
  double const pixels = double(width_) * double(height_);
  double const norm = double(reference_) * std::pow(double(texel[3]) * pixels, 1.0 / kPeakNorm);
  white_luminance_ = std::isfinite(norm) && norm > 0.0 ? float(norm) : std::exp(mean + 3.0f * spread);
  reference_ = std::max(average_luminance_, 1e-3f);
}

}  // namespace nbody::render
