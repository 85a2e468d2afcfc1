#version 330 core
// assets/shaders/trails.vert - one line per body (instance) between its positions `age` and
// `age + 1` frames ago; radiance fades linearly with age, the oldest end faintest.
layout(location = 0) in vec4 newer;  // x, y, z, m, `age` frames ago (divisor 1)
layout(location = 1) in vec4 older;  // the frame before it (divisor 1)
layout(location = 2) in vec4 color;  // sRGB-encoded body colour (divisor 1), white when absent

uniform mat4 view;
uniform mat4 projection;
uniform float age;           // frames since `newer` was recorded (0: the current frame)
uniform float trail_length;  // frames in the ring
uniform float brightness;    // linear radiance of the newest end for a white body

out vec3 trail_color;

vec3 srgb_to_linear(vec3 c) {
  c = clamp(c, 0.0, 1.0);
  return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(vec3(0.04045), c));
}

void main() {
  bool is_older = gl_VertexID == 1;  // GL_LINES, 2 vertices per instance
  vec4 p = is_older ? older : newer;
  float vertex_age = age + (is_older ? 1.0 : 0.0);
  gl_Position = projection * view * vec4(p.xyz, 1.0);
  trail_color = srgb_to_linear(color.rgb) * brightness * (1.0 - vertex_age / trail_length);
}
