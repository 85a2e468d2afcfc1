#version 330 core
// assets/shaders/bodies.vert - one point sprite per body; size shrinks with distance. Colours come
// in display (sRGB) values and leave as linear radiance, to be summed in a float target and tone mapped.
layout(location = 0) in vec4 position_mass;  // x, y, z, m
layout(location = 1) in vec4 color;         // sRGB-encoded, in [0, 1]

uniform mat4 view;
uniform mat4 projection;
uniform float point_size;      // pixels at the reference depth
uniform float reference_depth; // the distance the camera was fitted at: sizes scale with the scene
uniform float max_point_size;  // pixels a body near the camera grows to at most (render/camera.h)
uniform float brightness;      // linear radiance of a sprite's centre for a white body

out vec4 body_color;

// The sRGB decoding function (IEC 61966-2-1), so a colour chosen on screen is the hue that is summed.
vec3 srgb_to_linear(vec3 c) {
  c = clamp(c, 0.0, 1.0);
  return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(vec3(0.04045), c));
}

void main() {
  vec4 eye = view * vec4(position_mass.xyz, 1.0);
  gl_Position = projection * eye;
  // As render::sprite_pixels computes it.
  gl_PointSize = clamp(point_size * reference_depth / max(-eye.z, 1e-6 * reference_depth), 1.0, max(1.0, max_point_size));
  body_color = vec4(srgb_to_linear(color.rgb) * brightness, 1.0);
}
