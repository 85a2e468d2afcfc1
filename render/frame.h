// render/frame.h - the frame around what the renderers draw: viewport, background, completion.
#pragma once

namespace nbody::render {

// Starts a frame on the current framebuffer: the viewport covers width x height pixels and the
// background is cleared.
void begin_frame(int width, int height);

// Blocks until the GPU has executed every GL command issued so far, so a timer around the frame
// measures the GPU's work and not only its submission.
void finish_frame();

}  // namespace nbody::render
