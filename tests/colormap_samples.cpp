// tests/colormap_samples.cpp - prints render::map_color for every perceptual colour map at the points
// tests/check_colormaps.py asks for ("name t" per line on stdin -> "name t r g b" on stdout), so that
// script can hold them against matplotlib's own.
#include <cstdio>
#include <iostream>
#include <string>

#include "render/colors.h"

int main() {
  std::string name;
  float t = 0;
  while (std::cin >> name >> t) {
    auto const map = nbody::from_name<nbody::render::Colormap>(name);
    if (!map) {
      std::fprintf(stderr, "colormap_samples: unknown map '%s'\n", name.c_str());
      return 2;
    }
    nbody::render::Color const c = nbody::render::map_color(nbody::render::colormap_table(*map), t);
    std::printf("%s %.9g %.9g %.9g %.9g\n", name.c_str(), double(t), double(c.r), double(c.g), double(c.b));
  }
  return 0;
}
