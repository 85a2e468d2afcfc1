#version 330 core
// assets/shaders/tonemap.vert - one triangle that covers the viewport, from gl_VertexID alone (no
// vertex buffer): vertices (-1,-1), (3,-1), (-1,3).
void main() {
  vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));  // (0,0) (2,0) (0,2)
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
