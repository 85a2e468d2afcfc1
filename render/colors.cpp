// render/colors.cpp - colour modes.
#include "render/colors.h"

#include <algorithm>
#include <cmath>


namespace nbody::render {

Rgba speed_color(float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  // Piecewise linear: (0.15, 0.3, 1.0) -> (1, 1, 1) at 0.5 -> (1.0, 0.55, 0.1).
  if (t < 0.5f) {
    float const u = t / 0.5f;
    return {0.15f + 0.85f * u, 0.3f + 0.7f * u, 1.0f, 1.0f};
  }
  float const u = (t - 0.5f) / 0.5f;
  return {1.0f, 1.0f - 0.45f * u, 1.0f - 0.9f * u, 1.0f};
}

void compute_colors(ColorMode mode, const sim::BodySet& b, const std::vector<Slice>& slices,
                    std::vector<Rgba>& out) {
  std::size_t const n = b.size();
  out.resize(n);
  if (mode == ColorMode::speed) {
    std::vector<float> speed(n);
    for (std::size_t i = 0; i < n; ++i) speed[i] = float(norm(b.velocity[i]));
    std::vector<float> sorted = speed;
    float scale = 1.0f;
    if (n > 0) {
      std::size_t const k = std::min(n - 1, n * 95 / 100);
      std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(k), sorted.end());
      scale = sorted[k] > 0 ? sorted[k] : 1.0f;
    }
    for (std::size_t i = 0; i < n; ++i) out[i] = speed_color(speed[i] / scale);
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
