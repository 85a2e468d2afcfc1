#version 330 core
// assets/shaders/log_luminance.frag - the measurement pass of the HDR pipeline. The target is a
// power of two on each side, about half the scene's; each texel covers its block of scene pixels
// (every pixel in exactly one block) and holds the sums over it of (lit ? log L : 0),
// (lit ? log^2 L : 0), (lit ? 1 : 0) and (L / reference)^8, times `scale`. Mipmaps average it
// exactly down to one texel: the means over all pixels, from which the mean and spread of log
// luminance over the lit pixels follow, and the 8-norm of the luminance (at least the brightest
// pixel).
uniform sampler2D scene;
uniform float lit_luminance;  // HdrPipeline::kLitLuminance
uniform float reference;      // about the frame's average luminance: keeps the 8th powers in range
uniform ivec2 cells;          // the target's size
uniform float scale;          // texels / scene pixels
out vec4 result;

void main() {
  ivec2 size = textureSize(scene, 0);
  ivec2 cell = ivec2(gl_FragCoord.xy);
  ivec2 first = cell * size / cells, last = (cell + 1) * size / cells;  // [first, last)
  vec4 sum = vec4(0.0);
  for (int y = first.y; y < last.y; ++y) {
    for (int x = first.x; x < last.x; ++x) {
      vec3 c = texelFetch(scene, ivec2(x, y), 0).rgb;
      float luminance = dot(c, vec3(0.2126, 0.7152, 0.0722));  // Rec. 709 / sRGB primaries
      if (luminance > lit_luminance) {  // NaN is not lit
        float l = log(min(luminance, 65504.0));
        float ratio = min(exp(l) / reference, 60000.0);  // 60000^8 < the largest float
        float square = ratio * ratio, fourth = square * square;
        sum += vec4(l, l * l, 1.0, fourth * fourth);
      }
    }
  }
  result = sum * scale;
}
