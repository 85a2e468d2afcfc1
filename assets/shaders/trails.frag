#version 330 core
// assets/shaders/trails.frag - a trail's linear radiance, added to what is already there.
in vec3 trail_color;
out vec4 fragment;

void main() { fragment = vec4(trail_color, 0.0); }
