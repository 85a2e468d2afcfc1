#version 330 core
// assets/shaders/trails.vert - a vertex of a trail: a body's position some frames ago, from the ring
// of render/trails.h. Its slot in the ring (hence its age) and its body (hence its colour) follow
// from gl_VertexID, which counts slot x bodies + body; radiance fades linearly with age, the oldest
// end faintest.
layout(location = 0) in vec4 position_mass;  // x, y, z, m

uniform mat4 view;
uniform mat4 projection;
uniform int bodies;          // bodies per slot
uniform int newest_slot;     // the slot recorded last (age 0)
uniform float trail_length;  // frames in the ring
uniform float brightness;    // linear radiance of the newest end for a white body
uniform bool colored;        // false: white
uniform samplerBuffer colors;  // sRGB-encoded body colours, RGBA32F, one per body

out vec3 trail_color;

vec3 srgb_to_linear(vec3 c) {
  c = clamp(c, 0.0, 1.0);
  return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(vec3(0.04045), c));
}

void main() {
  int slot = gl_VertexID / bodies;
  int body = gl_VertexID - slot * bodies;
  int length = int(trail_length);
  float age = float((newest_slot - slot + length) % length);
  vec3 color = colored ? texelFetch(colors, body).rgb : vec3(1.0);
  gl_Position = projection * view * vec4(position_mass.xyz, 1.0);
  trail_color = srgb_to_linear(color) * brightness * (1.0 - age / trail_length);
}
