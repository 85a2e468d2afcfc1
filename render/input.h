// render/input.h - what the user's keys and mouse ask of the viewer, decided without GL (so it is
// tested without a display). The platform side (render/surface.h) gathers raw input through
// callbacks; route() turns it into commands, giving the HUD first claim: a key typed into a HUD text
// field (Esc cancelling an edit, 'q' in a number) never reaches the viewer.
#pragma once

#include "render/surface.h"

namespace nbody::render {

struct Commands {
  bool quit = false;               // Esc or q
  bool toggle_pause = false;       // space
  int steps = 0;                   // n: one step a press
  bool reset = false;              // r
  int next_color = 0;              // c: one colouring on a press
  bool fit = false;                // f
  bool screenshot = false;         // p
  bool save = false;               // s: a checkpoint of the current state
  int next_hud = 0;                // h: one HUD mode on a press
  bool toggle_follow = false;      // o: the camera follows the bodies' centre
  bool toggle_trails = false;      // t
  int step_rate = 0;               // + (or =) doubles the steps per update, - halves them: doublings, net
  bool toggle_fullscreen = false;  // F11
  float orbit_dx = 0, orbit_dy = 0, pan_dx = 0, pan_dy = 0, zoom = 0;
};

// The commands in `input`: every press counts, also several of a key in one frame (a toggle pressed twice is
// back where it was; a key that cycles or steps moves once a press). Keys count only when the HUD does not want the keyboard, mouse
// movement only when it does not want the mouse; F11 always.
Commands route(const Input& input, bool hud_wants_keyboard, bool hud_wants_mouse);

}  // namespace nbody::render
