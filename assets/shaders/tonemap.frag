#version 330 core
// assets/shaders/tonemap.frag - linear radiance x exposure -> Reinhard's extended curve -> sRGB, plus
// the background (display values, so no exposure brightens the empty sky).
uniform sampler2D scene;   // the HDR target, same size as the viewport
uniform float exposure;
uniform float white;       // exposed radiance that maps to 1 (HdrPipeline: measured, at least 4)
uniform vec3 background;
out vec4 fragment;

// Reinhard, Stark, Shirley & Ferwerda 2002, "Photographic tone reproduction for digital images",
// eq. 4: linear for small values, a long shoulder that reaches 1 exactly at `white`. Per channel, so
// the brightest cores turn white as film does, and a sprite's hue survives where it is not crowded.
vec3 reinhard_extended(vec3 c, float w) {
  return min(c * (1.0 + c / (w * w)) / (1.0 + c), 1.0);
}

// The sRGB encoding function (IEC 61966-2-1).
vec3 linear_to_srgb(vec3 c) {
  return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(vec3(0.0031308), c));
}

void main() {
  vec3 radiance = min(texelFetch(scene, ivec2(gl_FragCoord.xy), 0).rgb, vec3(65504.0));
  fragment = vec4(min(linear_to_srgb(reinhard_extended(radiance * exposure, white)) + background, 1.0), 1.0);
}
