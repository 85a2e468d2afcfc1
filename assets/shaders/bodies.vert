#version 330 core
// assets/shaders/bodies.vert - one point sprite per body; size shrinks with distance.
layout(location = 0) in vec4 position_mass;  // x, y, z, m
layout(location = 1) in vec4 color;

uniform mat4 view;
uniform mat4 projection;
uniform float point_size;      // pixels at the reference depth
uniform float reference_depth; // the distance the camera was fitted at: sizes scale with the scene
uniform float brightness;

out vec4 body_color;

void main() {
  vec4 eye = view * vec4(position_mass.xyz, 1.0);
  gl_Position = projection * eye;
  gl_PointSize = clamp(point_size * reference_depth / max(-eye.z, 1e-6 * reference_depth), 1.0, 64.0);
  body_color = vec4(color.rgb * brightness, 1.0);
}
