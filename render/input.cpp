// render/input.cpp - keys and mouse to viewer commands.
#include "render/input.h"

namespace nbody::render {

Commands route(const Input& in, bool hud_wants_keyboard, bool hud_wants_mouse) {
  Commands c;
  c.toggle_fullscreen = in.toggle_fullscreen;
  if (!hud_wants_keyboard) {
    c.quit = in.escape;
    for (char key : in.keys) {
      switch (key) {
        case 'q': c.quit = true; break;
        case ' ': c.toggle_pause = !c.toggle_pause; break;
        case 'n': ++c.steps; break;
        case 'r': c.reset = true; break;
        case 'c': ++c.next_color; break;
        case 'f': c.fit = true; break;
        case 'p': c.screenshot = true; break;
        case 's': c.save = true; break;
        case 'h': ++c.next_hud; break;
        case 'o': c.toggle_follow = !c.toggle_follow; break;
        case 't': c.toggle_trails = !c.toggle_trails; break;
        case '+': case '=': ++c.step_rate; break;
        case '-': --c.step_rate; break;
        default: break;
      }
    }
  }
  if (!hud_wants_mouse) {
    c.orbit_dx = in.orbit_dx;
    c.orbit_dy = in.orbit_dy;
    c.pan_dx = in.pan_dx;
    c.pan_dy = in.pan_dy;
    c.zoom = in.scroll;
  }
  return c;
}

}  // namespace nbody::render
