// app/viewer_session.h - the viewer's frame producer (app/viewer.cpp: the live simulation, renderer,
// camera, HUD and input handling) driven through a front end's own surface: `nbody --serve` gives it
// a surface whose input comes from a browser and whose frames go to one. The desktop viewer and the
// server share every line of it; only the surface differs.
#pragma once

#include <functional>
#include <memory>

#include "app/live_simulation.h"
#include "app/options.h"
#include "render/surface.h"

namespace nbody::app {

// Runs the viewer on `surface` until it closes or a signal arrives; `each_frame` sees the stats of
// every frame before it is drawn. Under MPI, ranks other than 0 follow rank 0's simulation (their
// `surface` is unused: pass nullptr). Returns the exit code (130/143 after a signal).
int run_viewer_session(const Options& options, std::unique_ptr<render::Surface> surface,
                       std::function<void(const LiveStats&)> each_frame);

}  // namespace nbody::app
