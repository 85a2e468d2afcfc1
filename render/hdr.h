// render/hdr.h - the HDR pipeline: renderers add linear radiance into a floating-point target; its
// log-luminance statistics are measured on the GPU; a tone curve (Reinhard extended, white point
// from those statistics) and the sRGB encoding bring it to the default framebuffer, so dense
// regions keep their structure instead of clipping to white.
#pragma once

#include "render/exposure.h"
#include "render/gl_objects.h"

namespace nbody::render {

class HdrPipeline {
 public:
  // Half floats: 11 bits of mantissa are plenty for a picture that is tone mapped afterwards, and
  // they halve the bandwidth of additive blending against RGBA32F (the largest sum, 65504, is
  // ~10^5 overlapping sprite centres at brightness 0.6; larger sums saturate, as the picture does).
  static constexpr GLenum kColorFormat = GL_RGBA16F;
  // What an empty pixel shows, in display (sRGB) values: near-black with a touch of blue, as
  // render/frame.cpp clears. It is added after the tone curve, so no exposure brightens it.
  static constexpr float kBackground[3] = {0.0f, 0.0f, 0.02f};
  // A pixel counts in the statistics when its luminance exceeds this (linear radiance): any light a
  // body put there; the empty black sky, often 90% of the frame, would otherwise decide the exposure.
  static constexpr float kLitLuminance = 1e-6f;
  // The white point - the luminance the tone curve maps to 1 - is the kPeakNorm-norm of the frame's
  // luminance, (sum of L^p)^(1/p): never below the brightest pixel, so nothing but the very peak
  // reaches white, and above it by at most (pixels about as bright)^(1/p) - a few pixels barely
  // matter. Measured with galaxy_20K at 640 x 480 (llvmpipe): brightest pixel 53.6, 8-norm 71.6;
  // the log-normal estimate used before, exp(mean + 3 sd), gave 20.0 and burnt its core to white.
  static constexpr double kPeakNorm = 8.0;
  // The white point after exposure never drops below this: where the spread is small (a few bodies),
  // the curve stays a gentle Reinhard shoulder instead of a clip at the brightest pixel.
  static constexpr float kMinWhite = 4.0f;

  HdrPipeline();  // needs a current GL context; loads the shaders, creates the (empty) targets

  // Binds the float target as the framebuffer to draw into, width x height pixels (sizes below 1,
  // a minimised window, count as 1), reallocating it when the size changed, with the viewport over
  // it, cleared to black: zero radiance (the background comes in end()).
  void begin(int width, int height);

  // Measures the frame (average_luminance(), white_luminance()), then draws it into the default
  // framebuffer, as one full-screen triangle: per channel, c = radiance x exposure, Reinhard's
  // extended curve c (1 + c / w^2) / (1 + c) with w = max(white_luminance() x exposure, kMinWhite),
  // the sRGB encoding, plus kBackground. Leaves framebuffer 0 bound, with the viewport over it.
  // Returns the exposure used: `exposure`, or 1 where it is not a positive finite number. Before
  // the first begin() it does nothing.
  float end(float exposure);
  // The frame last ended, tone mapped into the default framebuffer again with `exposure` (its
  // statistics as they were): what a window shows while nothing in the scene moved, for the cost
  // of one full-screen pass instead of every sprite again. Same state afterwards as end().
  float show_again(float exposure);

  // The log-average luminance, exp(mean(log L)), over the lit pixels of the frame last ended (linear
  // radiance units, before exposure; 0 when nothing was lit): what AutoExposure::update takes.
  // Measured on the GPU: a pass sums (log L, log^2 L, 1, L^8) over lit pixels into a power-of-two target,
  // mipmaps reduce it to one texel, and only that texel (16 bytes) is read back - a wait for the
  // GPU's frame, which the viewer does anyway (finish_frame).
  float average_luminance() const { return average_luminance_; }
  // The white point of the frame last ended (linear radiance, before exposure): the kPeakNorm-norm
  // of its luminance (from the same texel's fourth channel); 0 when nothing was lit.
  float white_luminance() const { return white_luminance_; }
  // The tone curve of the frame last shown with `exposure` (end's or show_again's) for sprites of `brightness`.
  ToneCurve tone(float exposure, float brightness) const;
  // The fraction of pixels that were lit, in [0, 1], from the same texel.
  float lit_fraction() const { return lit_fraction_; }

  GLuint color_texture() const { return color_.get(); }  // the float target, for tests and effects

 private:
  float display(float exposure, bool measure_first);
  void allocate(int width, int height);
  void measure();
  void tone_map(float exposure);

  Program tone_map_program_, measure_program_;
  VertexArray empty_;                 // the full-screen triangle comes from gl_VertexID
  Texture color_, log_luminance_;     // kColorFormat, width x height; RGBA32F, half size, mipmapped
  Framebuffer scene_target_, measure_target_;
  int width_ = 0, height_ = 0;
  int measure_levels_ = 0;            // mip levels of log_luminance_; the last is 1 x 1
  GLint exposure_location_ = -1, white_location_ = -1, background_location_ = -1;
  GLint reference_location_ = -1, cells_location_ = -1, scale_location_ = -1;
  int measure_width_ = 0, measure_height_ = 0;  // powers of two, about half the scene's size
  float reference_ = 1.0f;  // the last frame's average luminance: the scale of the 8th powers
  float average_luminance_ = 0.0f, white_luminance_ = 0.0f, lit_fraction_ = 0.0f;
};

}  // namespace nbody::render
