// app/viewer.cpp - the viewer's main loop: a Simulation drawn through render/ (window or EGL).
#include "app/modes.h"

#ifdef NBODY_HAVE_VIEWER

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>

#include "core/errors.h"
#include "core/interrupt.h"
#include "driver/setup.h"
#include "gpu/devices.h"
#include "multigpu/simulation.h"
#include "render/body_renderer.h"
#include "render/camera.h"
#include "render/colors.h"
#include "render/cuda_gl_interop.h"
#include "render/frame.h"
#include "render/hud.h"
#include "render/screenshot.h"
#include "render/surface.h"
#include "sim/physics/scenarios.h"

namespace nbody::app {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string timestamped_png() {
  char buf[64];
  std::time_t const now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "nbody-%Y%m%d-%H%M%S.png", std::localtime(&now));
  return buf;
}

class Viewer {
 public:
  explicit Viewer(const Options& o) : options_(o) {
    if (!o.offscreen && !display_available())
      throw InputError("--viewer: no display (DISPLAY and WAYLAND_DISPLAY are unset); use --offscreen for EGL "
                       "rendering, or --benchmark");
    if (!o.frames_dir.empty()) {
      struct stat st {};
      if (stat(o.frames_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw InputError("--frames-dir " + o.frames_dir + ": not an existing directory");
    }
    setup_ = driver::make_setup(o.run);
    if (!o.quiet)
      for (auto const& notice : setup_.notices) std::cerr << "notice: " << notice << "\n";
    surface_ = o.offscreen ? render::open_offscreen(o.width, o.height) : render::open_window(o.width, o.height, "nbody");
    renderer_ = std::make_unique<render::BodyRenderer>();
    hud_ = std::make_unique<render::Hud>(surface_->glfw_window());
    controls_.dt = float(setup_.program.dt);
    controls_.softening = float(setup_.config.softening);
    controls_.point_size = float(o.point_size);
    controls_.brightness = float(o.brightness);
    controls_.color = o.color;
    controls_.paused = o.paused;
    controls_.hidden = !o.hud;
    controls_.steps_per_frame = o.steps_per_frame;
    controls_.threading = setup_.config.threading == multigpu::Threading::workers ? 1 : 0;
    controls_.devices = int(setup_.config.devices.size());
    scenarios_ = all_names<sim::Scenario>();
    controls_.scenario = int(o.run.initial.scenario);  // the table lists the scenarios in enum order
    if (!o.run.initial.snapshot.empty())
      scenarios_.insert(scenarios_.begin(), "file: " + o.run.initial.snapshot), controls_.scenario = 0;
    if (setup_.config.backend == sim::Backend::cuda) max_devices_ = int(gpu::devices().size());
    if (!o.quiet) std::cerr << "viewer: " << surface_->describe() << ", " << render::gl_description() << "\n";
    start(setup_.bodies, setup_.clock);
  }

  int run() {
    std::uint64_t const frames = options_.frames ? options_.frames : (options_.offscreen || !options_.screenshot.empty() ? 1 : 0);
    auto last = Clock::now();
    for (std::uint64_t frame = 0; frames == 0 || frame < frames; ++frame) {
      if (surface_->should_close() || quit_ || interrupt_signal()) break;
      float const frame_seconds = float(ms_since(last) * 1e-3);
      last = Clock::now();
      handle_input(surface_->poll());
      apply_controls();
      step();
      std::string const shot = next_screenshot(frame, frames);
      auto const r0 = Clock::now();
      draw(frame_seconds, !shot.empty());
      render::finish_frame();  // render time: getting the bodies to GL, drawing bodies and HUD, done on the GPU
      double const render_ms = ms_since(r0);
      stats_.render_ms = stats_.render_ms == 0 ? render_ms : 0.9 * stats_.render_ms + 0.1 * render_ms;
      if (frame > 0) total_render_ms_ += render_ms, ++measured_frames_;  // the first frame sets things up
      if (!shot.empty()) {
        render::write_png(shot, render::read_pixels(surface_->width(), surface_->height()), surface_->width(),
                          surface_->height());
        if (shot == options_.screenshot) screenshot_written_ = true;
      }
      surface_->present();
      if (frame > 0 && frame_seconds > 0)  // frame 0 has no previous frame to measure from
        stats_.fps = stats_.fps == 0 ? 1.0 / frame_seconds : 0.9 * stats_.fps + 0.1 / frame_seconds;
    }
    if (screenshot_written_ && !options_.quiet) std::cerr << "viewer: wrote " << options_.screenshot << "\n";
    if (!options_.quiet && measured_frames_ > 0) {
      std::fprintf(stderr, "viewer: N = %zu, %llu frames: step %.3f ms (mean of the last), render %.3f ms per frame (mean), %s\n",
                   sim_->bodies(), (unsigned long long)(measured_frames_ + 1), stats_.step_ms,
                   total_render_ms_ / double(measured_frames_), stats_.upload.c_str());
    }
    if (int const sig = interrupt_signal()) {
      std::fprintf(stderr, "viewer: %s\n", Interrupted(sig).what());
      return interrupted_exit_code(sig);
    }
    return 0;
  }

 private:
  void start(const sim::BodySet& bodies, multigpu::RunClock clock) {
    sim_ = std::make_unique<multigpu::Simulation>(bodies, setup_.program, setup_.config, clock);
    camera_.fit(bodies.pos_mass);
    // The energy takes an O(N^2) pass: tracked where that is quick (GPU up to 1M bodies, CPU up
    // to 32K), measured at the start and then about once a second.
    track_energy_ = setup_.config.backend == sim::Backend::cuda ? sim_->bodies() <= (1u << 20)
                                                                      : sim_->bodies() <= 32768;
    if (track_energy_) e0_ = sim_->diagnostics().total();
    stats_.energy_error = 0;
    frames_since_energy_ = 0;
    colors_dirty_ = true;
    choose_upload_path();
    stats_.bodies = sim_->bodies();
    stats_.backend = name_of(setup_.config.backend);
    stats_.kernel = sim_->kernel_name();
    stats_.precision = name_of(setup_.config.precision);
    stats_.devices = std::to_string(setup_.config.devices.size());
    stats_.threading = name_of(setup_.config.threading);
    stats_.help = kViewerKeys;
  }

  // CUDA-GL interop where the run is on a GPU in fp32 and the GL context shares with CUDA; host
  // upload otherwise, said once in the log and always in the HUD.
  void choose_upload_path() {
    interop_.reset();
    bool const possible = setup_.config.backend == sim::Backend::cuda &&
                          setup_.config.precision == Precision::fp32 && options_.interop != Interop::off;
    std::string why;
    if (possible) {
      try {
        renderer_->resize(sim_->bodies());
        interop_ = std::make_unique<render::CudaGlInterop>(renderer_->position_buffer(), renderer_->color_buffer(),
                                                           sim_->bodies(), setup_.config.devices.front());
        stats_.upload = "CUDA-GL interop (GPU " + std::to_string(setup_.config.devices.front()) + ")";
      } catch (const std::exception& e) {
        why = e.what();
      }
    } else {
      why = options_.interop == Interop::off ? "--interop off"
            : setup_.config.backend == sim::Backend::cpu ? "CPU backend"
                                                              : "fp64 positions";
    }
    if (!interop_) {
      if (options_.interop == Interop::on) throw RuntimeFailure("--interop on: CUDA-GL interop unavailable: " + why);
      stats_.upload = "host upload (" + why + ")";
    }
    if (!options_.quiet && stats_.upload != announced_) std::cerr << "viewer: positions to GL by " << stats_.upload << "\n";
    announced_ = stats_.upload;
  }

  void handle_input(const render::Input& in) {
    if (in.escape) quit_ = true;
    if (in.toggle_fullscreen) surface_->set_fullscreen(fullscreen_ = !fullscreen_);
    if (!hud_->wants_keyboard()) {
      for (char key : in.keys) {
        switch (key) {
          case ' ': controls_.paused = !controls_.paused; break;
          case 'n': controls_.step_once = true; break;
          case 'r': controls_.reset = true; break;
          case 'c': controls_.color = render::next(controls_.color); break;
          case 'f': camera_.fit(sim_->state().pos_mass); break;
          case 'p': screenshot_requested_ = true; break;
          case 'h': controls_.hidden = !controls_.hidden; break;
          default: break;
        }
      }
    }
    if (!hud_->wants_mouse()) {
      camera_.orbit(in.orbit_dx, in.orbit_dy);
      camera_.pan(in.pan_dx, in.pan_dy, float(surface_->height()));
      camera_.zoom(in.scroll);
    }
  }

  // Live changes: rebuild the simulation from its current state (dt, softening, threading,
  // device count), or restart a scenario (reset).
  void apply_controls() {
    if (controls_.color != shown_color_) colors_dirty_ = true;
    surface_->set_vsync(controls_.vsync);
    if (controls_.reset) {
      controls_.reset = false;
      driver::RunConfig run = options_.run;
      bool const from_file = !run.initial.snapshot.empty() && controls_.scenario == 0;
      if (!from_file) {
        run.initial.snapshot.clear();
        auto const scenario = *from_name<sim::Scenario>(scenarios_[std::size_t(controls_.scenario)]);
        if (scenario != run.initial.scenario && options_.run.physics.softening == 0)
          controls_.softening = float(sim::recommended_softening(scenario));
        run.initial.scenario = scenario;
      }
      run.physics.dt = controls_.dt;
      run.physics.softening = controls_.softening;
      setup_ = driver::make_setup(run);
      apply_device_controls();
      start(setup_.bodies, setup_.clock);
    } else if (controls_.apply) {
      controls_.apply = false;
      sim::BodySet const state = sim_->state();
      // The same run on another layout keeps its clock; a new dt starts the clock again from now.
      multigpu::RunClock clock = sim_->clock();
      setup_.program = sim::make_step_program(
          {options_.run.physics.integrator, double(controls_.dt), options_.run.physics.damping});
      if (setup_.program.dt != sim_->program().dt) clock = {0, state.time};
      setup_.config.softening = controls_.softening;
      apply_device_controls();
      auto const camera = camera_;
      start(state, clock);
      camera_ = camera;  // a settings change keeps the view
    }
  }

  void apply_device_controls() {
    setup_.config.threading = controls_.threading ? multigpu::Threading::workers : multigpu::Threading::single;
    if (setup_.config.backend == sim::Backend::cuda && controls_.devices >= 1 && controls_.devices <= max_devices_) {
      setup_.config.devices.clear();
      for (int d = 0; d < controls_.devices; ++d) setup_.config.devices.push_back(d);
      setup_.config.weights.clear();
    }
  }

  void step() {
    if (controls_.paused && !controls_.step_once) return;
    std::uint64_t const n = controls_.step_once ? 1 : std::uint64_t(controls_.steps_per_frame);
    controls_.step_once = false;
    auto const t0 = Clock::now();
    sim_->advance(n);
    sim_->synchronize();
    double const per_step = ms_since(t0) / double(n);
    stats_.step_ms = stats_.step_ms == 0 ? per_step : 0.8 * stats_.step_ms + 0.2 * per_step;
    double const bodies = double(sim_->bodies());
    stats_.interactions_per_s = bodies * bodies / (stats_.step_ms * 1e-3);
    colors_dirty_ = colors_dirty_ || controls_.color == render::ColorMode::speed;
  }

  void draw(float frame_seconds, bool screenshot) {
    int const energy_every = setup_.config.backend == sim::Backend::cuda ? 60 : 600;
    if (track_energy_ && (++frames_since_energy_ >= energy_every || screenshot)) {
      frames_since_energy_ = 0;
      stats_.energy_error = sim::relative_energy_error(sim_->diagnostics().total(), e0_);
    }
    stats_.energy_known = track_energy_;
    stats_.time = sim_->time();
    upload_bodies();
    render::begin_frame(surface_->width(), surface_->height());
    float const aspect = float(surface_->width()) / float(std::max(1, surface_->height()));
    renderer_->draw(camera_.view(), camera_.projection(aspect), controls_.point_size, camera_.fitted_distance(),
                    controls_.brightness);
    hud_->draw(stats_, controls_, scenarios_, max_devices_, surface_->width(), surface_->height(), frame_seconds);
  }

  // Positions every frame, colours when they change (every step in speed mode). With interop the
  // positions, and the speed colours, never leave the GPU; otherwise the state comes to the host.
  void upload_bodies() {
    std::size_t const n = sim_->bodies();
    bool const gpu_colors = interop_ && controls_.color == render::ColorMode::speed;
    sim::BodySet state;
    if (!interop_ || (colors_dirty_ && !gpu_colors)) state = sim_->state();
    if (interop_) {
      interop_->copy_positions(sim_->current_positions(0), n * sim_->bytes_per_body());
    } else {
      positions_.resize(4 * n);
      for (std::size_t i = 0; i < n; ++i) {
        positions_[4 * i] = float(state.pos_mass[i].x);
        positions_[4 * i + 1] = float(state.pos_mass[i].y);
        positions_[4 * i + 2] = float(state.pos_mass[i].z);
        positions_[4 * i + 3] = float(state.pos_mass[i].w);
      }
      renderer_->upload_positions(positions_.data(), n);
    }
    if (colors_dirty_) {
      if (gpu_colors) {
        std::vector<render::DeviceVelocities> velocities;
        for (std::size_t d = 0; d < sim_->slices().size(); ++d)
          velocities.push_back({sim_->current_velocities(int(d)), sim_->device_ordinal(int(d)), sim_->slices()[d]});
        interop_->color_by_speed(velocities);
      } else {
        render::compute_colors(controls_.color, state, sim_->slices(), colors_);
        renderer_->upload_colors(colors_);
      }
      shown_color_ = controls_.color;
      colors_dirty_ = false;
    }
  }

  // The PNG to write after this frame, if any: --screenshot on the last frame (it also takes the
  // last frame of --frames-dir), every frame into --frames-dir, or the 'p' key's timestamped file.
  std::string next_screenshot(std::uint64_t frame, std::uint64_t frames) {
    if (!options_.screenshot.empty() && frame + 1 == frames) return options_.screenshot;
    if (!options_.frames_dir.empty()) {
      char name[32];
      std::snprintf(name, sizeof name, "/frame_%05llu.png", (unsigned long long)frame);
      return options_.frames_dir + name;
    }
    if (screenshot_requested_) {
      screenshot_requested_ = false;
      std::string const name = timestamped_png();
      std::cerr << "viewer: screenshot " << name << "\n";
      return name;
    }
    return "";
  }

  Options options_;
  driver::Setup setup_;
  std::unique_ptr<render::Surface> surface_;
  std::unique_ptr<render::BodyRenderer> renderer_;
  std::unique_ptr<render::Hud> hud_;
  std::unique_ptr<render::CudaGlInterop> interop_;
  std::unique_ptr<multigpu::Simulation> sim_;
  render::OrbitCamera camera_;
  render::HudControls controls_;
  render::HudStats stats_;
  std::vector<std::string> scenarios_;
  std::vector<float> positions_;
  std::vector<render::Rgba> colors_;
  render::ColorMode shown_color_ = render::ColorMode::speed;
  std::string announced_;
  int max_devices_ = 1;
  double e0_ = 0;
  bool track_energy_ = false;
  double total_render_ms_ = 0;
  std::uint64_t measured_frames_ = 0;
  int frames_since_energy_ = 0;
  bool colors_dirty_ = true, screenshot_requested_ = false, quit_ = false, fullscreen_ = false;
  bool screenshot_written_ = false;
};

}  // namespace

bool viewer_available() { return true; }

int run_viewer(const Options& options) {
  Viewer viewer(options);
  return viewer.run();
}

}  // namespace nbody::app

#else  // built without the viewer's libraries

#include "core/errors.h"

namespace nbody::app {
bool viewer_available() { return false; }
int run_viewer(const Options&) {
  throw InputError("--viewer: this nbody was built without the viewer (GLFW, GLEW, GLM, Dear ImGui and stb were "
                   "not found); install them (scripts/install-deps.sh) and rebuild");
}
}  // namespace nbody::app

#endif
