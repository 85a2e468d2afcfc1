#version 330 core
// assets/shaders/bodies.frag - soft round sprite: linear radiance, added to what is already there
// (blending GL_ONE, GL_ONE; in the HDR target nothing clips until the tone curve).
in vec4 body_color;
out vec4 fragment;

void main() {
  vec2 d = gl_PointCoord * 2.0 - 1.0;
  float r2 = dot(d, d);
  if (r2 > 1.0) discard;
  float falloff = exp(-4.0 * r2);  // Gaussian-like core, fading to the rim
  fragment = vec4(body_color.rgb * falloff, 1.0);
}
