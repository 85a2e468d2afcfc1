// render/colors.cpp - colour modes.
#include "render/colors.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace nbody::render {

float speed_scale(float* sample_speeds, std::size_t count) {
  if (count == 0) return 1.0f;
  std::size_t const k = std::min(count - 1, count * 95 / 100);
  std::nth_element(sample_speeds, sample_speeds + k, sample_speeds + count);
  return sample_speeds[k] > 0 ? sample_speeds[k] : 1.0f;
}

void compute_colors(ColorMode mode, const sim::BodySet& b, const std::vector<Slice>& slices,
                    std::vector<Rgba>& out) {
  std::size_t const n = b.size();
  out.resize(n);
  if (mode == ColorMode::speed) {
    // Velocities as the fp32 GPU engine holds them, so both paths see the same inputs. Each speed
    // waits in its own colour's first channel: frame after frame, nothing of size N is allocated.
    for (std::size_t i = 0; i < n; ++i)
      out[i][0] = speed_of(float(b.velocity[i].x), float(b.velocity[i].y), float(b.velocity[i].z));
    std::size_t const stride = speed_sample_stride(n);
    std::array<float, kSpeedSample> sample;
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; i += stride) sample[count++] = out[i][0];
    float const scale = speed_scale(sample.data(), count);
    for (std::size_t i = 0; i < n; ++i) {
      Color const c = speed_color(out[i][0] / scale);
      out[i] = {c.r, c.g, c.b, c.a};
    }
  } else if (mode == ColorMode::type) {
    double max_star = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (b.type[i] == sim::BodyType::star) max_star = std::max(max_star, b.pos_mass[i].w);
    for (std::size_t i = 0; i < n; ++i) {
      switch (b.type[i]) {
        case sim::BodyType::dark:
          out[i] = {0.45f, 0.3f, 0.75f, 1.0f};
          break;
        case sim::BodyType::gas:
          out[i] = {0.3f, 0.85f, 0.9f, 1.0f};
          break;
        case sim::BodyType::star: {
          float const light = max_star > 0 ? float(1.0 - b.pos_mass[i].w / max_star) : 0.0f;  // 0 = heaviest
          out[i] = {1.0f, 0.85f + 0.1f * light, 0.6f + 0.4f * light, 1.0f};
          break;
        }
      }
    }
  } else {
    static const Rgba palette[] = {{1.0f, 0.45f, 0.3f, 1.0f}, {0.35f, 0.8f, 1.0f, 1.0f}, {0.5f, 1.0f, 0.4f, 1.0f},
                                   {1.0f, 0.85f, 0.3f, 1.0f}, {0.85f, 0.45f, 1.0f, 1.0f}, {0.3f, 1.0f, 0.85f, 1.0f},
                                   {1.0f, 0.4f, 0.7f, 1.0f},  {0.7f, 0.7f, 0.7f, 1.0f}};
    for (std::size_t d = 0; d < slices.size(); ++d)
      for (std::size_t i = slices[d].begin; i < slices[d].end() && i < n; ++i) out[i] = palette[d % 8];
  }
}

}  // namespace nbody::render
