// app/viewer.cpp - the viewer: a LiveSimulation (app/live_simulation.h) drawn through render/ in a
// window or an EGL pbuffer. Interactive, the simulation runs on its own thread and the render loop
// looks for input and the latest completed frame at the display's rate, drawing a frame only when it
// would show something new (Viewer::frame_wanted); recording (--offscreen, --screenshot,
// --frames, --frames-dir, --video), every frame is one batch of steps, so pictures are the same run
// after run, made on the simulation's thread too while the render loop waits, the window and the
// signals still seen. Nothing the user does in the viewer ends it but quitting: a change that cannot
// be made, a screenshot that cannot be written, becomes a message in the HUD and the log.
#include "app/modes.h"

#ifdef NBODY_HAVE_VIEWER

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "app/live_simulation.h"
#include "app/serve_protocol.h"
#include "app/viewer_session.h"
#include "core/clock.h"
#include "core/bounds.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_path.h"
#include "core/ranks.h"
#include "driver/setup.h"
#include "gpu/devices.h"
#include "render/body_renderer.h"
#include "render/camera.h"
#include "render/colors.h"
#include "render/cuda_gl_interop.h"
#include "render/exposure.h"
#include "render/frame.h"
#include "render/hdr.h"
#include "render/hud.h"
#include "render/input.h"
#include "render/overlay.h"
#include "render/screenshot.h"
#include "render/surface.h"
#include "render/trails.h"
#include "render/video_encoder.h"
#include "sim/io/checkpoint.h"
#include "sim/physics/scenarios.h"

namespace nbody::app {
namespace {

namespace fs = std::filesystem;

// Where screenshots and checkpoints from the keys go: --screenshot-dir, else the user's pictures
// folder ($XDG_PICTURES_DIR, ~/Pictures), else the current folder.
std::string output_folder(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  if (char const* xdg = std::getenv("XDG_PICTURES_DIR"); xdg && *xdg && fs::is_directory(xdg, ec)) return xdg;
  if (char const* home = std::getenv("HOME"); home && *home && fs::is_directory(fs::path(home) / "Pictures", ec))
    return (fs::path(home) / "Pictures").string();
  return ".";
}

// folder/nbody-YYYYMMDD-HHMMSS.ext, with -2, -3 ... when that name is taken.
// `given`: the names handed out before, whose files may not be written yet (a checkpoint is written on the
// simulation's thread a moment later): two in one second get two names.
std::string timestamped(const std::string& folder, const char* extension, std::set<std::string>& given) {
  char stamp[32];
  std::time_t const now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "nbody-%Y%m%d-%H%M%S", std::localtime(&now));
  std::string path = (fs::path(folder) / (std::string(stamp) + extension)).string();
  std::error_code ec;
  for (int k = 2; fs::exists(path, ec) || given.count(path); ++k)
    path = (fs::path(folder) / (std::string(stamp) + "-" + std::to_string(k) + extension)).string();
  given.insert(path);
  return path;
}

// Drawing on demand (Viewer::frame_wanted). After input, frames go on for at least kSettleFrames and
// kSettleSeconds: ImGui shows a click, a hover or an opened section on the frames after the event, and
// its auto-sized panel takes two frames to fit new content; a drag's events, tens a second, keep the
// frames coming at the display's rate.
constexpr std::uint64_t kSettleFrames = 4;
constexpr double kSettleSeconds = 0.1;
// The full HUD's live figures (frames/s, steps/s, step time, energy) are redrawn at 4 Hz while the run
// steps and nothing else is drawn: a few times a second reads as live, and costs a few frames where 60 were drawn.
constexpr double kFiguresPeriod = 0.25;
// The automatic exposure approaches its target exponentially and never reaches it exactly. Frames are
// drawn for it once it is 5% away (a scene that brightens or dims, a zoom: about what an eye notices),
// until it is within 1% (about one grey level of the 8-bit picture at most). Between the two it
// follows on the frames that draw the scene anew (new positions, a moved camera): the next one adapts
// over all the time since the last (a frame for the HUD alone leaves it, draw_scene), and the
// frame-to-frame flicker of a moving swarm's brightness (1 to 2%) draws no frames of its own.
constexpr double kExposureStart = 0.05, kExposureSettled = 0.01;

// How often a recording waiting for its simulation looks at the window and the signals.
constexpr double kRecordingLookSeconds = 0.02;
// A new body count whose steps would each take longer than this is asked for twice (Viewer::bodies_confirmed), at
// the run's pace or at least these (pairs a second in a step of many bodies: fp64 on a small GPU, one CPU core).
constexpr double kConfirmStepSeconds = 60;
// The question stands this long: the same count entered later (or by a page that connected since) is asked again.
constexpr int kConfirmWindowSeconds = 60;
constexpr double kUsualGpuPairsPerSecond = 1e11, kUsualCpuPairsPerSecond = 1e9;

// `more` input after `to`'s, as if gathered in one poll.
void add_input(render::Input& to, const render::Input& more) {
  to.keys += more.keys;
  to.escape = to.escape || more.escape;
  to.orbit_dx += more.orbit_dx, to.orbit_dy += more.orbit_dy;
  to.pan_dx += more.pan_dx, to.pan_dy += more.pan_dy;
  to.scroll += more.scroll;
  to.toggle_fullscreen = to.toggle_fullscreen || more.toggle_fullscreen;
  to.events = to.events || more.events;
}

// Sprites large enough to see two bodies and small enough not to merge a million into a blur.
float default_point_size(std::size_t bodies) {
  return float(std::clamp(64.0 / std::pow(double(std::max<std::size_t>(bodies, 1)), 0.25), 2.0, 24.0));
}

// The option that asked for a window, as messages about it name it: --viewer where it was given (the window is what
// it asks for; --frames beside it only counts the window's frames), else the option that implied the viewer.
std::string window_option(const Options& o) {
  if (o.viewer_named) return "--viewer";
  if (!o.screenshot.empty()) return "--screenshot " + o.screenshot;
  if (!o.video.empty()) return "--video " + o.video;
  if (!o.frames_dir.empty()) return "--frames-dir " + o.frames_dir;
  if (o.frames > 0) return "--frames " + std::to_string(o.frames);
  return "--viewer";
}

// A window that cannot be had (no display, or one that cannot be opened): bad input, with the ways to run without.
InputError no_window(const Options& o, const std::string& why) {
  return InputError(window_option(o) + ": " + why + "; use --offscreen for EGL rendering, or --benchmark");
}

class Viewer {
 public:
  // `surface`: a front end's own (--serve's browser surface), told each frame's stats through
  // `each_frame`; else a window, or an EGL pbuffer with --offscreen.
  explicit Viewer(const Options& o, std::unique_ptr<render::Surface> surface = nullptr,
                  std::function<void(const LiveStats&)> each_frame = {})
      : options_(o), each_frame_(std::move(each_frame)) {
    if (!surface && !o.offscreen && !display_available())
      throw no_window(o, "no display (DISPLAY and WAYLAND_DISPLAY are unset)");
    if (!o.frames_dir.empty()) {
      std::error_code ec;
      fs::create_directories(o.frames_dir, ec);
      if (ec || !fs::is_directory(o.frames_dir))
        throw InputError("--frames-dir " + o.frames_dir + ": cannot create the folder (" + ec.message() + ")");
      check_output_path((fs::path(o.frames_dir) / "frame_00000.png").string(), "--frames-dir");
      // Frames of an earlier recording would mix with this one's (a shorter run leaves the old ones
      // after its own, and a movie made of the folder shows both): refused, nothing removed.
      for (auto const& entry : fs::directory_iterator(o.frames_dir, ec)) {
        std::string const name = entry.path().filename().string();
        if (name.size() == 15 && name.rfind("frame_", 0) == 0 && name.compare(11, 4, ".png") == 0 &&
            std::all_of(name.begin() + 6, name.begin() + 11, [](char ch) { return ch >= '0' && ch <= '9'; }))
          throw InputError("--frames-dir " + o.frames_dir + ": holds frames of an earlier recording (" + name +
                           "); choose an empty folder or remove them");
      }
    }
    recording_ = o.offscreen || !o.screenshot.empty() || !o.frames_dir.empty() || !o.video.empty() || o.frames > 0;
    // The window first: where none can open, the default mode falls back before any other work.
    served_ = surface != nullptr;
    // A page has no window of the server's to fill or close: F11 is the browser's, and the page ends nothing.
    if (served_)
      keys_.erase(std::remove_if(keys_.begin(), keys_.end(),
                                 [](const auto& key) { return key.first == "F11" || key.first == "Esc or q"; }),
                  keys_.end());
    surface_ = surface ? std::move(surface)
               : o.offscreen ? render::open_offscreen(o.width, o.height, "--offscreen")
                             : render::open_window(o.width, o.height, "nbody");
    renderer_ = std::make_unique<render::BodyRenderer>();
    hdr_ = std::make_unique<render::HdrPipeline>();
    hud_ = std::make_unique<render::Hud>(surface_->glfw_window());
    if (!o.video.empty()) video_ = std::make_unique<render::VideoEncoder>(o.video, o.width, o.height, o.video_fps);
    folder_ = output_folder(o.screenshot_dir);

    // The bodies, the first forces and the initial energy are the simulation's start-up, on its own
    // thread (O(N^2): a minute at a million bodies on the CPU): the first frame shows at once, saying
    // so, and a quit during the start-up is at once too. The controls take the run's values when it
    // has started (new_generation).
    controls_.block_steps = o.run.physics.integrator == sim::Integrator::hermite4;
    // The defaults the start-up will choose where none was named (a file's values show once it has read them).
    bool const from_file = !o.run.initial.checkpoint.empty() || !o.run.initial.snapshot.empty();
    controls_.dt = controls_.block_steps          ? o.run.physics.hermite.dt_max
                   : o.run.physics.dt > 0 || from_file ? o.run.physics.dt
                                                  : sim::default_dt(o.run.physics.integrator);
    controls_.softening = from_file ? o.run.physics.softening : driver::resolved_softening(o.run);
    controls_.damping = o.run.physics.damping;
    controls_.damping_applies = o.run.physics.integrator == sim::Integrator::euler_damped;
    controls_.precision = o.run.devices.engine.precision == Precision::fp64 ? 1 : 0;
    controls_.point_size = float(o.point_size);
    controls_.brightness = float(o.brightness);
    controls_.color = o.color;
    controls_.colormap = o.colormap;
    if (o.color_range) {  // given in the legend's units
      double const f = render::speed_unit(o.run.units).factor;
      controls_.color_range = {float(o.color_range->first / f), float(o.color_range->second / f)};
      controls_.color_range_fixed = true;
    }
    controls_.paused = o.paused;
    controls_.hud = o.hud;
    controls_.steps_per_update = o.steps_per_frame.value_or(1);
    // Two bodies tell their story through their orbits: trails on, and a few steps a frame so the
    // trail spans an orbit.
    bool const two_body = !from_file && o.run.initial.scenario == sim::Scenario::two_body;
    controls_.trails = two_body || o.trails;
    trails_for_binary_ = two_body && !o.trails;
    trails_before_ = controls_.trails;
    if (two_body && !o.steps_per_frame) controls_.steps_per_update = binary_steps_per_update();
    controls_.threading = o.run.devices.threading == multigpu::Threading::workers ? 1 : 0;
    controls_.bodies = std::int64_t(o.run.initial.bodies ? o.run.initial.bodies
                                                         : from_file ? 0 : sim::default_bodies(o.run.initial.scenario));
    controls_.devices = o.run.devices.count;
    scenarios_ = all_names<sim::Scenario>();
    controls_.scenario = int(o.run.initial.scenario);  // the table lists the scenarios in enum order
    std::string const file = !o.run.initial.checkpoint.empty() ? o.run.initial.checkpoint : o.run.initial.snapshot;
    if (!file.empty()) scenarios_.insert(scenarios_.begin(), "file: " + fs::path(file).filename().string()), controls_.scenario = 0;
    requested_ = shown_ = o.run;
    shown_.physics.dt = controls_.dt;  // as show_running: the values the controls hold
    shown_.physics.softening = controls_.softening;
    requested_bodies_ = std::size_t(controls_.bodies);
    if (!two_body && controls_.bodies > 2) many_bodies_ = std::size_t(controls_.bodies);
    softening_chosen_ = o.run.physics.softening != 0;
    reset_view_ = true;  // the first run's opening view, once it has started

    // CUDA-GL interop where the run is on a GPU in fp32 and the GL context shares with CUDA: then the
    // frames stay on that GPU. The devices as the run will resolve them (one body: no memory check).
    std::optional<int> frames_device;
    if (o.interop != Interop::off && world().size() == 1) {
      multigpu::SimulationConfig const devices = driver::resolve_devices(o.run, 1, nullptr);
      if (devices.backend == sim::Backend::cuda) try {  // can this GL context share buffers with CUDA at all?
        renderer_->resize(1);
        render::CudaGlInterop probe(renderer_->position_buffer(), renderer_->color_buffer(), 1, devices.devices.front());
        frames_device = devices.devices.front();
      } catch (const std::exception& e) {
        if (o.interop == Interop::on) throw RuntimeFailure(std::string("--interop on: CUDA-GL interop unavailable: ") + e.what());
        interop_failure_ = e.what();
      }
    }
    camera_.set_aspect(aspect());
    live_ = std::make_unique<LiveSimulation>(o.run, frames_device, true);  // the other ranks: follow_viewer
    live_->set_paused(requested_pause_ = o.paused);
    live_->set_steps_per_update(controls_.steps_per_update);
    live_->want_levels(controls_.color == render::ColorMode::level);  // hermite4's first frame has them too
    if (!o.quiet) std::cerr << "viewer: " << surface_->describe() << ", " << render::gl_description() << "\n";
    // Recording, the simulation's thread works in lockstep with the frames (advance_recording).
    if (recording_) live_->start_recording();
    else live_->start();
  }

  int run() {
    std::uint64_t const frames = viewer_frames(options_);  // 0: until the window closes
    auto last = Clock::now();  // the last pass of the loop
    std::deque<Clock::time_point> recent;  // frame times of the last second, for FPS
    double total_render_ms = 0;
    std::uint64_t measured = 0, drawn = 0;
    // Interactive: a pass about 60 times a second (a display without vsync, or Xvfb, would spin),
    // sleeping until input arrives; 10 while a simulation starts, when only the HUD's line moves (a
    // software renderer's frames would take half the cores the start-up needs).
    auto const wait = [&](const LiveStats& stats) {
      double const period = stats.starting.empty() ? 1.0 / 60.0 : 0.1;
      if (!recording_) surface_->wait_events(std::max(0.0, period - seconds_since(last)));
    };
    for (std::uint64_t frame = 0; frames == 0 || frame < frames; ++frame) {
      if (surface_->should_close() || quit_ || interrupt_signal()) break;
      // A recording's frames are a fixed time apart (the video's, else 1/60 s) whatever the machine
      // took to make them: the exposure adapts alike on every run, so the pictures are the same.
      float const frame_seconds =
          recording_ ? float(1.0 / (video_ ? options_.video_fps : 60.0)) : float(seconds_since(shown_at_));
      last = Clock::now();
      render::Input const input = take_input();
      if (input.events) wake(drawn);
      handle(render::route(input, hud_->wants_keyboard(), hud_->wants_mouse()));
      apply_controls();
      if (recording_ && !advance_recording()) break;  // one batch per frame (the first: the start-up too)
      collect_messages();
      live_->check_started();  // a start-up that failed (bad input) ends the viewer with its error
      LiveStats const stats = live_->stats();
      count_steps(stats);
      if (stats.generation != generation_) new_generation(stats);
      else if (stats.refused != refused_) resync(stats);
      update_follow();
      // Unwatched (--serve with no browser connected), a frame would be drawn, read back and encoded for nobody:
      // none is uploaded or drawn. The run goes on at the pace it has when watched (each pass lets it make its next
      // batch); a browser that connects is input (poll), and frames follow at once.
      if (!recording_ && drawn > 0 && !surface_->watched() && !screenshot_requested_) {
        live_->frame_shown();
        unwatched_ = true;
        wait(stats);
        continue;
      }
      // Watched again: the trails recorded no point while nobody watched, and would join the last one before to the
      // next with a straight line across the gap. They start again.
      if (std::exchange(unwatched_, false) && trails_) trails_->clear();

      auto const r0 = Clock::now();
      recording_ms_ = 0;
      upload_frame();
      camera_.set_aspect(aspect());
      // Interactive, a frame is drawn only when it would show something new (frame_wanted); the pass
      // still polls the input and the simulation at the display's rate.
      if (!recording_ && !frame_wanted(stats, drawn)) {
        wait(stats);
        continue;
      }
      shown_at_ = Clock::now();  // the exposure and ImGui count their time from the last frame drawn
      shown_stats_ = ShownStats{stats.paused, stats.step, stats.generation, stats.starting};
      hud_changed_ = false;
      if (each_frame_) each_frame_(stats);
      if (!exposure_settled_) {  // the first frame of a scene: measured before it is shown
        draw_scene(0.0f);
        exposure_settled_ = true;
      }
      draw_scene(frame_seconds);
      // Without --video-hud the movie has the bodies alone, unless the HUD is minimal: then the legend,
      // time and scale bar are what it is for.
      bool const video_with_hud = options_.video_hud || controls_.hud != render::HudMode::full;
      if (video_ && !video_with_hud) record_video();
      hud_->draw(hud_stats(stats), controls_, scenarios_, max_devices_, surface_->width(), surface_->height(),
                 frame_seconds);
      if (video_ && video_with_hud) record_video();
      render::finish_frame();  // render time: bodies to GL, the bodies and the HUD drawn, done on the GPU
      double const render_ms = 1e3 * seconds_since(r0) - recording_ms_;
      render_ms_ = render_ms_ == 0 ? render_ms : 0.9 * render_ms_ + 0.1 * render_ms;
      if (drawn > 0) total_render_ms += render_ms, ++measured;  // the first frame sets things up
      write_pictures(frame, frames);
      surface_->present();
      ++drawn;

      recent.push_back(Clock::now());
      while (recent.size() > 1 && std::chrono::duration<double>(recent.back() - recent.front()).count() > 1.0)
        recent.pop_front();
      fps_ = recent.size() > 1
                 ? double(recent.size() - 1) / std::chrono::duration<double>(recent.back() - recent.front()).count()
                 : 0.0;
      wait(stats);
    }
    // Interrupted or closed (q, Esc, the window's close) before the last frame: --screenshot still gets a
    // picture, of the latest state, as --video keeps the frames it has; before the first state there is
    // none to show, and nothing is written (nor a video of no frame).
    bool const ended_early = interrupt_signal() || quit_ || surface_->should_close();
    if (ended_early && !options_.screenshot.empty() && !screenshot_written_) {
      if (generation_ != 0) write_interrupted_screenshot();
      else log("viewer: --screenshot " + options_.screenshot + " not written: " +
               (interrupt_signal() ? "interrupted" : "closed") + " before the first frame");
    }
    if (screenshot_written_ && !options_.quiet) std::cerr << "viewer: wrote " << options_.screenshot << "\n";
    if (video_ && video_->frames() == 0) {
      log("viewer: --video " + options_.video + " not written: the recording ended before its first frame");
      video_.reset();  // ffmpeg stopped, its temporary file removed
    }
    if (video_) {
      // An interrupted recording still keeps the frames it has; one that cannot (a full disk) is said, and the run
      // still ends as the signal asked (its exit code), as --screenshot's does.
      try {
        video_->finish();
        if (!options_.quiet)
          std::cerr << "viewer: wrote " << options_.video << " (" << video_->frames() << " frames)\n";
      } catch (const std::exception& e) {  // its message names the video
        if (!interrupt_signal()) throw;
        std::fprintf(stderr, "viewer: not written at the early end: %s\n", e.what());
      }
    }
    LiveStats const stats = live_->stats();
    // The step's time where the run made steps: the mean of every step since it was last made (its start, a reset, a
    // change of settings), said with their count; none since then, not said.
    char step[160] = "";
    if (stats.timed_steps > 0)
      std::snprintf(step, sizeof step, "step %.3f ms (mean of the %llu %s since the run last started or changed), ",
                    stats.timed_ms / double(stats.timed_steps), (unsigned long long)stats.timed_steps,
                    stats.block_steps ? (stats.timed_steps == 1 ? "block step" : "block steps")
                                      : (stats.timed_steps == 1 ? "step" : "steps"));
    // Ended during the start-up, before the first state: no bodies to name, and no way positions reached GL yet.
    std::string const shown = stats.bodies ? "N = " + std::to_string(stats.bodies) : "no bodies yet (the start-up)";
    std::string const upload = upload_.empty() ? "" : ", " + upload_;
    if (!options_.quiet && measured > 0)
      std::fprintf(stderr, "viewer: %s, %llu frames: %srender %.3f ms per frame (mean)%s\n", shown.c_str(),
                   (unsigned long long)drawn, step, total_render_ms / double(measured), upload.c_str());
    else if (!options_.quiet && drawn == 1 && frames == 1)  // the first frame sets things up: it times nothing
      std::fprintf(stderr, "viewer: %s, 1 frame: %srender not timed (the first frame sets up; --frames 2 or more "
                   "times it)%s\n", shown.c_str(), step, upload.c_str());
    live_.reset();  // stops the simulation thread (after the step in progress)
    if (int const sig = interrupt_signal()) {
      std::fprintf(stderr, "viewer: %s\n", Interrupted(sig).what());
      return interrupted_exit_code(sig);
    }
    return 0;
  }

 private:
  float aspect() const { return float(surface_->width()) / float(std::max(1, surface_->height())); }

  // What the HDR target holds: drawn with this camera and these sprite settings, at this size.
  struct SceneKey {
    glm::mat4 view{1.0f}, projection{1.0f};
    float point_size = 0, brightness = 0;
    bool trails = false;
    int width = 0, height = 0;
    bool operator==(const SceneKey& o) const {
      return view == o.view && projection == o.projection && point_size == o.point_size &&
             brightness == o.brightness && trails == o.trails && width == o.width && height == o.height;
    }
  };
  // What the HDR target would hold if drawn now: the camera, the sprites, the size.
  SceneKey scene_key() const {
    return SceneKey{camera_.view(), camera_.projection(aspect()), controls_.point_size, controls_.brightness,
                    controls_.trails, surface_->width(), surface_->height()};
  }

  // Whether this pass of the interactive loop draws a frame. Each frame drawn is GL work on the GPU
  // the simulation may run on (and under --serve a read-back and a JPEG): a million bodies step
  // twice a second, and sixty frames a second of the same picture took 7% of their rate. So a frame
  // is drawn only when it would show something new:
  bool frame_wanted(const LiveStats& stats, std::uint64_t drawn) {
    // The HUD changed: the panel fits its new content a frame later (a message gone left a blank band under a paused
    // run's still picture), so one more frame, whatever else asks for this one.
    if (hud_changed_) settle_until_frame_ = std::max(settle_until_frame_, drawn + 2);
    if (drawn == 0) return true;  // the first picture
    // New positions or colours (a new simulation frame, a new run, a colour change), or the camera,
    // the sprites or the size moved (a drag, the wheel, a key, follow, a resized window).
    if (scene_changed_ || !(scene_key() == shown_scene_)) return true;
    // Input, and a few frames after it: ImGui shows a click, a hover or an opened section over the
    // next frames, and its auto-sized panel takes two frames to fit new content.
    if (drawn < settle_until_frame_ || seconds_since(input_at_) < kSettleSeconds) return true;
    // A message came or went, the run or the HUD's controls changed, a picture is asked for.
    if (hud_changed_ || screenshot_requested_) return true;
    // What the frame's header (--serve) and the HUD say about the run: paused or not, the step,
    // the run itself, the start-up's progress.
    if (stats.paused != shown_stats_.paused || stats.step != shown_stats_.step ||
        stats.generation != shown_stats_.generation || stats.starting != shown_stats_.starting)
      return true;
    // The automatic exposure adapting to a changed scene.
    if (controls_.auto_exposure && exposure_adapting()) return true;
    // The full HUD's live figures (frames/s, steps/s, step and render times, the energy) a few times
    // a second while the run steps; paused, they are those of its last steps (only the render time
    // would change, by being drawn), and the minimal HUD and none show nothing that changes between
    // simulation frames: a still picture.
    return controls_.hud == render::HudMode::full && !stats.paused && seconds_since(shown_at_) >= kFiguresPeriod;
  }

  // The binary's steps a frame where the user names none: 4 fixed steps (the trail, a point a frame, then spans
  // an orbit), or one of hermite4's spans of dt max (1/16 by default, already 6 times 4 fixed steps of 0.01: more,
  // and a frame's point of the trail jumped over a whole pericentre passage, drawing the orbit with corners).
  int binary_steps_per_update() const { return controls_.block_steps ? 1 : 4; }

  // Input arrived: frames for a little while, whatever else changes.
  void wake(std::uint64_t drawn) {
    input_at_ = Clock::now();
    settle_until_frame_ = drawn + kSettleFrames;
  }

  // The automatic exposure is adapting: from when it is kExposureStart from its target (for the
  // scene last measured) until it is within kExposureSettled.
  bool exposure_adapting() {
    float const luminance = hdr_->average_luminance();
    if (!(luminance > 0.0f) || !std::isfinite(luminance)) return exposure_adapting_ = false;  // empty: it stays
    double const target = std::clamp(double(render::AutoExposure::kKey) / double(luminance),
                                     double(render::AutoExposure::kMinExposure),
                                     double(render::AutoExposure::kMaxExposure));
    double const gap = std::abs(std::log(double(exposure_.exposure()) / double(exposure_.manual_factor()) / target));
    return exposure_adapting_ = gap > (exposure_adapting_ ? kExposureSettled : kExposureStart);
  }

  // Recording: the next frame's batch of steps (the first: the start-up too) on the simulation's
  // thread, waited for here in looks of kRecordingLookSeconds, between which the window's events and
  // the signals are seen: closing the window, q or Esc, Ctrl-C or SIGTERM end the recording at once,
  // and the batch in progress is abandoned (a CPU step or start-up between two bodies). The wait
  // has no bound of its own: a batch is as long as the simulation makes it (a step of a million
  // bodies on a CPU takes minutes), and the user can always end it. False: the recording ends.
  bool advance_recording() {
    live_->advance();
    while (!live_->wait_advanced(kRecordingLookSeconds)) {
      add_input(held_input_, surface_->poll());  // kept for the next frame (take_input)
      if (render::route(held_input_, hud_->wants_keyboard(), hud_->wants_mouse()).quit) quit_ = true;
      if (quit_ || surface_->should_close() || interrupt_signal()) return false;
    }
    return !interrupt_signal();  // a signal during the batch: its frame (perhaps abandoned) is not drawn
  }

  // The input since the last frame: what arrived while a recording waited for its batch, then the rest.
  render::Input take_input() {
    render::Input all = std::exchange(held_input_, render::Input{});
    add_input(all, surface_->poll());
    return all;
  }

  // The bodies (and their trails) into the HDR target, tone mapped into the window with the automatic
  // exposure (or the HUD's own). When nothing that shapes the scene changed since the last frame (no
  // new positions or colours, the same camera, sprites and window) the target is shown again as it
  // is: while a long step runs, a frame costs one full-screen pass, not every sprite again.
  void draw_scene(float seconds) {
    SceneKey const key = scene_key();
    glm::mat4 const &view = key.view, &projection = key.projection;
    exposure_.set_manual_factor(controls_.auto_exposure ? controls_.exposure : 1.0f);
    if (!scene_changed_ && key == shown_scene_) {
      // The same scene again, for the HUD (a hover, a message going) or for the exposure itself: the automatic
      // exposure moves only while frames are drawn for it (exposure_adapting), so a still picture whose
      // exposure settled stays the same picture under a HUD that changes.
      float const automatic = exposure_adapting_ ? exposure_.update(hdr_->average_luminance(), seconds) : exposure_.exposure();
      shown_exposure_ = hdr_->show_again(controls_.auto_exposure ? automatic : controls_.exposure);
      return;
    }
    hdr_->begin(surface_->width(), surface_->height());
    if (controls_.trails && trails_) trails_->draw(view, projection, renderer_->color_buffer(), 0.5f * controls_.brightness);
    renderer_->draw(view, projection, controls_.point_size, camera_.fitted_distance(), controls_.brightness);
    float const automatic = exposure_.update(hdr_->average_luminance(), seconds);
    shown_exposure_ = hdr_->end(controls_.auto_exposure ? automatic : controls_.exposure);
    shown_scene_ = key;
    scene_changed_ = false;
  }

  // The frame, as drawn so far, into --video; a window resized mid-recording ends the video there.
  void record_video() {
    int const w = surface_->width(), h = surface_->height();
    if (w != video_->width() || h != video_->height()) {
      tell("the window changed size: --video ends here, with " + std::to_string(video_->frames()) + " frames");
      video_->finish();
      video_.reset();
      return;
    }
    auto const pixels = render::read_pixels(w, h);
    auto const t0 = Clock::now();
    video_->add_frame(pixels);
    recording_ms_ += 1e3 * seconds_since(t0);  // encoding and writing: not render time
  }

  void log(const std::string& text) {
    if (!options_.quiet) std::cerr << text << "\n";
  }

  // A message for the HUD (shown a few seconds) and the log. The pages of --serve see the files it names by their
  // names alone, not the server's folders.
  void tell(const std::string& text) {
    log("viewer: " + text);
    messages_.push_back({served_ ? serve::without_folders(text, hidden_folders()) : text, Clock::now()});
    if (messages_.size() > 5) messages_.pop_front();
    hud_changed_ = true;
  }

  // The server's folders that --serve's pages are not shown: where the keys write, where the bodies came from, the
  // working folder and the home folder.
  std::vector<std::string> hidden_folders() const {
    std::vector<std::string> folders{folder_, options_.frames_dir};
    for (auto const& file : {options_.run.initial.snapshot, options_.run.initial.checkpoint, options_.screenshot,
                             options_.video})
      if (!file.empty()) folders.push_back(fs::path(file).parent_path().string());
    std::error_code ec;
    folders.push_back(fs::current_path(ec).string());
    if (char const* home = std::getenv("HOME"); home && *home) folders.push_back(home);
    return folders;
  }

  void collect_messages() {
    for (auto const& m : live_->take_messages()) tell(m);
    for (auto const& f : live_->take_files()) surface_->offer_file(f);
    while (!messages_.empty() && seconds_since(messages_.front().second) > 8.0) {
      messages_.pop_front();
      hud_changed_ = true;
    }
  }

  void handle(const render::Commands& c) {
    if (c.quit) quit_ = true;
    if (c.toggle_fullscreen && surface_->set_fullscreen(!fullscreen_)) fullscreen_ = !fullscreen_;
    if (c.toggle_pause) controls_.paused = !controls_.paused;
    controls_.steps_asked += c.steps;
    if (c.reset) controls_.reset = true;
    for (int i = 0; i < c.next_color; ++i) controls_.color = render::next(controls_.color);
    if (c.fit) camera_.fit(live_->state().pos_mass);
    if (c.screenshot) controls_.screenshot = true;
    if (c.save) controls_.save = true;
    for (int i = 0; i < c.next_hud; ++i) {
      controls_.hud = render::next(controls_.hud);
      log("viewer: HUD " + name_of(controls_.hud));  // said where no panel shows it
    }
    // The keys that flip a View box say what they did: the box is out of sight with the panel folded or hidden.
    if (c.toggle_follow) {
      controls_.follow = !controls_.follow;
      tell(controls_.follow ? "follow on: the view keeps the centre of mass in its middle (o)" : "follow off (o)");
    }
    if (c.toggle_trails) {
      controls_.trails = !controls_.trails;
      tell(controls_.trails ? "trails on (t)" : "trails off (t)");
    }
    // + and - double and halve the steps per update (the HUD's slider), within 1 and --steps-per-frame's bound.
    if (c.step_rate != 0) {
      long long steps = controls_.steps_per_update;
      for (int k = 0; k < c.step_rate; ++k) steps = std::min(steps * 2, kMaxStepsPerFrame);
      for (int k = 0; k > c.step_rate; --k) steps = std::max(steps / 2, 1LL);
      controls_.steps_per_update = int(steps);
      tell((controls_.block_steps ? "dt max per update " : "steps per update ") + std::to_string(steps) +
           " (+ doubles, - halves)");
    }
    camera_.orbit(c.orbit_dx, c.orbit_dy);
    camera_.pan(c.pan_dx, c.pan_dy, float(surface_->height()));
    camera_.zoom(c.zoom);
  }

  // The HUD's edits to requests for the simulation (applied between two of its steps).
  void apply_controls() {
    if (!controls_.refused.empty()) {  // a value the command line would refuse (core/bounds.h)
      tell(controls_.refused);
      controls_.refused.clear();
    }
    if (controls_.softening_edited) softening_chosen_ = true, controls_.softening_edited = false;
    if (controls_.trails != trails_before_) trails_for_binary_ = false, trails_before_ = controls_.trails;  // the user's
    if (controls_.vsync != vsync_) surface_->set_vsync(vsync_ = controls_.vsync);
    // The simulation pauses itself on a failure (a state no longer finite): that pause stands until
    // the user resumes, and the HUD shows it.
    if (live_->paused() != requested_pause_) controls_.paused = requested_pause_ = live_->paused();
    if (controls_.paused != requested_pause_) live_->set_paused(requested_pause_ = controls_.paused);
    if (controls_.steps_asked > 0) live_->step(std::uint64_t(controls_.steps_asked)), controls_.steps_asked = 0;
    live_->set_steps_per_update(controls_.steps_per_update);
    live_->want_centre(controls_.follow);
    if (controls_.color != shown_color_ || controls_.colormap != shown_coloring_.map ||
        controls_.color_range != shown_coloring_.range)
      colors_dirty_ = true;
    if (controls_.fit_color_range) {
      controls_.fit_color_range = false;
      controls_.color_range_fixed = false;
      fit_color_range_ = colors_dirty_ = true;
    }
    if (controls_.screenshot) {
      controls_.screenshot = false;
      screenshot_requested_ = true;
    }
    if (controls_.save) {
      controls_.save = false;
      Change change;
      change.kind = Change::Kind::save;
      change.path = timestamped(folder_, sim::checkpoints_built() ? ".h5" : ".bin", names_given_);
      if (!sim::checkpoints_built())
        tell("checkpoints need HDF5 (this nbody was built without it); nothing saved");
      else
        live_->request(change);
    }
    if (controls_.reset) {
      controls_.reset = false;
      reset();
    } else if (controls_.apply) {
      controls_.apply = false;
      if (generation_ == 0) {  // still starting: the values edited are applied once it runs (new_generation)
        queued_ = edited();
        tell("the run is still starting: the change is made once it runs");
        return;
      }
      Change change;
      change.kind = Change::Kind::settings;
      change.run = requested_ = settings();
      awaited_ = live_->request(change);
    }
  }

  // The settings the user changed in the HUD: those its controls hold that differ from what runs (shown_).
  struct Edited {
    bool block_steps = false;  // the dt control was hermite4's dt max
    std::optional<double> dt, softening, damping;
    std::optional<int> precision, threading, devices;
  };
  Edited edited() const {
    Edited e;
    e.block_steps = controls_.block_steps;
    if (controls_.dt != shown_.physics.dt) e.dt = controls_.dt;
    if (controls_.softening != shown_.physics.softening) e.softening = controls_.softening;
    if (controls_.damping != shown_.physics.damping) e.damping = controls_.damping;
    if ((controls_.precision ? Precision::fp64 : Precision::fp32) != shown_.devices.engine.precision)
      e.precision = controls_.precision;
    if ((controls_.threading ? multigpu::Threading::workers : multigpu::Threading::single) != shown_.devices.threading)
      e.threading = controls_.threading;
    if (controls_.devices != shown_.devices.count) e.devices = controls_.devices;
    return e;
  }

  // The settings the HUD shows, on top of those asked for last: only what the user changed.
  driver::RunConfig settings() const {
    driver::RunConfig run = requested_;
    Edited const e = edited();
    if (e.dt) {
      if (e.block_steps)  // hermite4's "dt max"
        run.physics.hermite.dt_max = *e.dt, run.given.dt_max = true;
      else
        run.physics.dt = *e.dt;
    }
    if (e.softening) run.physics.softening = *e.softening;
    if (e.damping) run.physics.damping = *e.damping;
    if (e.precision) run.devices.engine.precision = *e.precision ? Precision::fp64 : Precision::fp32;
    if (e.threading) run.devices.threading = *e.threading ? multigpu::Threading::workers : multigpu::Threading::single;
    if (e.devices) {
      run.devices.count = *e.devices;
      run.devices.gpus.clear();
      run.devices.weights.clear();
    }
    return run;
  }

  // A new start: the scenario (or file) chosen in the HUD with a body count it accepts. The scenario's
  // own softening unless the user chose one, and the last request wins however quickly they come:
  // each is made from what was asked for last, not from what runs now.
  void reset() {
    driver::RunConfig run = settings();
    bool const from_file = scenarios_.front().rfind("file: ", 0) == 0 && controls_.scenario == 0;
    if (from_file) {
      // N is the file's: one typed is not taken (the file is not loaded again for it, its run not begun again).
      if (controls_.bodies != std::int64_t(requested_bodies_)) {
        // (0 until the file's first state is shown: it is being read)
        tell(requested_bodies_ ? "N is the file's (" + count_text(requested_bodies_) +
                                     " bodies); choose a scenario to run another N"
                               : "N is the file's (still being read); choose a scenario to run another N");
        controls_.bodies = std::int64_t(requested_bodies_);
        return;
      }
      run.initial = options_.run.initial;  // the file again, as loaded
    } else {
      run.initial.snapshot.clear();
      run.initial.checkpoint.clear();
      auto const scenario = *from_name<sim::Scenario>(scenarios_[std::size_t(controls_.scenario)]);
      bool const changed = scenario != requested_.initial.scenario || !requested_.initial.snapshot.empty() ||
                           !requested_.initial.checkpoint.empty();
      if (controls_.bodies < 1 || std::uint64_t(controls_.bodies) > kMaxBodies) {
        tell("N = " + std::to_string(controls_.bodies) + " is not a body count (1 to " + std::to_string(kMaxBodies) +
             "); N stays " + std::to_string(requested_bodies_));
        controls_.bodies = std::int64_t(requested_bodies_);
        return;
      }
      std::size_t bodies = std::size_t(controls_.bodies);
      if (scenario == sim::Scenario::two_body) {
        if (bodies != 2) tell("two-body has exactly 2 bodies; starting it with 2");
        bodies = 2;
      } else if (changed && bodies == 2) {  // from the binary: the many bodies of the run before it, or the default
        bodies = many_bodies_.value_or(sim::default_bodies(scenario));
      }
      if (!bodies_confirmed(bodies)) {
        controls_.bodies = std::int64_t(requested_bodies_);
        return;
      }
      run.initial.scenario = scenario;
      run.initial.bodies = bodies;
      controls_.bodies = std::int64_t(bodies);
      requested_bodies_ = bodies;
      if (scenario != sim::Scenario::two_body && bodies > 2) many_bodies_ = bodies;
      if (changed) {  // the binary's story is its orbits: trails, and a few steps a frame
        bool const binary = scenario == sim::Scenario::two_body;
        // Trails the user turned on stay on; those turned on for the binary go with it.
        if (binary && !controls_.trails)
          controls_.trails = trails_for_binary_ = true;
        else if (!binary && trails_for_binary_)
          controls_.trails = trails_for_binary_ = false;
        trails_before_ = controls_.trails;
        if (!options_.steps_per_frame) controls_.steps_per_update = binary ? binary_steps_per_update() : 1;
      }
    }
    if (!softening_chosen_) run.physics.softening = 0;  // the scenario's (or the file's) own
    reset_view_ = true;
    Change change;
    change.kind = Change::Kind::reset;
    change.run = requested_ = run;
    awaited_ = live_->request(change);
  }

  // A body count whose steps would take minutes each (a zero too many) is asked for twice: once begun, a GPU's step
  // runs to its end, and the viewer takes no other change until then. The time is N^2 over the pace of the run now
  // (pairs a second), or over a pace that many bodies reach at least where that is the faster: a step of
  // few bodies is mostly overhead, and its pace would make any larger N look slow. True where it may start.
  bool bodies_confirmed(std::size_t bodies) {
    // (Entered again within kConfirmWindowSeconds: an answer to the question; later, or by a page that connected
    // since, a new request, asked again.)
    bool const answered = bodies == bodies_to_confirm_ && std::chrono::steady_clock::now() - asked_at_ <
                                                            std::chrono::seconds(kConfirmWindowSeconds);
    if (bodies <= requested_bodies_ || answered) {
      bodies_to_confirm_ = 0;
      return true;
    }
    LiveStats const stats = live_->stats();
    if (stats.generation == 0) return true;  // nothing runs yet to tell the backend or a pace
    bool const gpu = stats.backend == sim::Backend::cuda;
    double const usual = gpu ? kUsualGpuPairsPerSecond : kUsualCpuPairsPerSecond;
    // Pairs a second as the run computes them (hermite4's block step moves few bodies: its step time says nothing of a
    // pass over all of them, which its start makes), else from the step time.
    double const measured = stats.interactions_per_s > 0 ? stats.interactions_per_s
                            : stats.step_ms > 0          ? double(stats.bodies) * double(stats.bodies) / (stats.step_ms / 1e3)
                                                         : 0;
    double const seconds = double(bodies) * double(bodies) / std::max(measured, usual);
    if (seconds < kConfirmStepSeconds) return true;
    bodies_to_confirm_ = bodies;
    asked_at_ = std::chrono::steady_clock::now();
    char took[32];
    if (seconds < 3600) std::snprintf(took, sizeof took, "%.0f min", seconds / 60);
    else if (seconds < 48 * 3600) std::snprintf(took, sizeof took, "%.1f h", seconds / 3600);
    else std::snprintf(took, sizeof took, "%.0f days", seconds / 86400);
    // What to do first: a narrow panel shows a message's first lines.
    tell("enter N = " + std::to_string(bodies) + " again to start it: one step would take about " + took + " (" +
         (measured > usual ? "this run's pace" : gpu ? "a GPU's usual pace" : "a CPU's usual pace") + "), and " +
         (gpu ? "nothing else can change until it ends" : "a new N, scenario or Reset, or quitting, stops it at once"));
    return false;
  }

  // A new simulation (first, or after a reset or a settings change): buffers sized for its N, the
  // way to GL chosen again. The HUD's controls and the view follow it only when it answers the last
  // request: one made for an earlier request (a scenario switched again meanwhile) leaves them be.
  void new_generation(const LiveStats& stats) {
    hud_changed_ = true;
    if (generation_ == 0) first_generation_ = stats.generation;
    generation_ = stats.generation;
    refused_ = stats.refused;
    running_ = stats.run;
    source_ = stats.source;
    slices_ = stats.slices;
    energy_tracked_ = stats.energy_tracked;
    max_devices_ = stats.backend == sim::Backend::cuda
                       ? int(gpu::devices().size())
                       : std::max(int(stats.devices), int(std::min(8u, std::thread::hardware_concurrency())));
    interop_.reset();  // CUDA lets go of the GL buffers before they are reallocated
    renderer_->resize(stats.bodies);
    render::TrailPlan const plan = render::plan_trails(stats.bodies, render::software_renderer());
    if (!trails_ || trails_->length() != plan.length || trails_->stride() != plan.stride)
      trails_ = std::make_unique<render::TrailRenderer>(plan.length, plan.stride);
    trails_->resize(stats.bodies);
    trails_->clear();
    exposure_.reset();
    exposure_settled_ = false;
    colors_dirty_ = true;
    // A new run's speeds: the range from its first frame; a run that goes on (new settings) keeps its range.
    if (!stats.continued) fit_color_range_ = !controls_.color_range_fixed;
    last_frame_ = ~std::uint64_t{0};
    choose_upload_path(stats);
    if (stats.changes_done < awaited_) return;  // a later request is on its way
    show_running(stats);
    // Settings edited during the start-up, over those it chose: asked for now, as if applied now, of the first
    // simulation that answers the last request (a scenario switched meanwhile: the one it makes).
    if (queued_) {
      Edited const& q = *queued_;
      if (q.dt && q.block_steps != controls_.block_steps)  // a file's integrator, other than the panel's
        tell(std::string("the ") + (q.block_steps ? "dt max" : "dt") + " edited during the start-up is not this " +
             "run's (" + (controls_.block_steps ? "hermite4's dt max" : "a fixed dt") + "): not changed");
      else if (q.dt)
        controls_.dt = *q.dt;
      if (q.softening) controls_.softening = *q.softening;
      if (q.damping) controls_.damping = *q.damping;
      if (q.precision) controls_.precision = *q.precision;
      if (q.threading) controls_.threading = *q.threading;
      if (q.devices) controls_.devices = *q.devices;
      controls_.apply = true;
      queued_.reset();
    }
    if (reset_view_) {
      reset_view_ = false;
      render::look_at_scenario(camera_, stats.source);
      camera_.fit(live_->state().pos_mass);
      // The sprites' size for this N, unless the user chose one (--point-size, or the slider).
      if (options_.point_size > 0 || controls_.point_size != default_point_size_) point_size_chosen_ = true;
      if (!point_size_chosen_) controls_.point_size = default_point_size_ = default_point_size(stats.bodies);
    }
  }

  // The HUD shows what runs, and settings() starts from it.
  void show_running(const LiveStats& stats) {
    requested_ = stats.run;
    requested_bodies_ = stats.bodies;
    controls_.bodies = std::int64_t(stats.bodies);
    controls_.dt = stats.dt;
    controls_.softening = stats.softening;
    controls_.damping = stats.run.physics.damping;
    controls_.devices = int(stats.devices);
    controls_.precision = stats.run.devices.engine.precision == Precision::fp64 ? 1 : 0;
    controls_.threading = stats.run.devices.threading == multigpu::Threading::workers ? 1 : 0;
    controls_.damping_applies = stats.run.physics.integrator == sim::Integrator::euler_damped;
    controls_.block_steps = stats.run.physics.integrator == sim::Integrator::hermite4;
    shown_ = stats.run;  // the values the controls hold, to tell the user's changes from them
    shown_.physics.dt = controls_.dt;
    shown_.physics.softening = controls_.softening;
    shown_.physics.damping = controls_.damping;
    shown_.devices.count = controls_.devices;
  }

  // A change was refused (a message says why): the HUD shows again what runs, and a view reset that
  // was waiting for the new run is dropped. A later request still on its way settles it instead.
  void resync(const LiveStats& stats) {
    hud_changed_ = true;
    refused_ = stats.refused;
    if (stats.changes_done < awaited_) return;
    reset_view_ = false;
    show_running(stats);
    for (std::size_t k = 0; k < scenarios_.size(); ++k)
      if (scenarios_[k] == name_of(stats.run.initial.scenario) && stats.run.initial.snapshot.empty() &&
          stats.run.initial.checkpoint.empty())
        controls_.scenario = int(k);
    if (scenarios_.front().rfind("file: ", 0) == 0 &&
        (!stats.run.initial.snapshot.empty() || !stats.run.initial.checkpoint.empty()))
      controls_.scenario = 0;
  }

  // CUDA-GL interop when the simulation's frames are on a GPU; host upload otherwise, said in the
  // log and the HUD.
  void choose_upload_path(const LiveStats& stats) {
    interop_.reset();
    std::string why;
    int device = -1;  // where the frames are captured, for an fp32 CUDA run with interop
    live_->with_frame([&](std::uint64_t, const sim::BodySet&, const render::DeviceFrames* f, const auto&) {
      if (f) device = f->device();
    });
    if (device >= 0) {
      try {
        interop_ = std::make_unique<render::CudaGlInterop>(renderer_->position_buffer(), renderer_->color_buffer(),
                                                           stats.bodies, device);
        upload_ = "CUDA-GL interop (GPU " + std::to_string(device) + ")";
      } catch (const std::exception& e) {
        why = e.what();
      }
    } else {
      why = options_.interop == Interop::off                         ? "--interop off"
            : !interop_failure_.empty()                               ? interop_failure_
            : stats.backend != sim::Backend::cuda                     ? "CPU backend"
            : running_.devices.engine.precision == Precision::fp64    ? "fp64 positions"
            : running_.physics.integrator == sim::Integrator::hermite4 ? "hermite4's fp64 positions"
                                                                      : "no device frames";
    }
    if (!interop_) {
      // At the start --interop on insists; later (fp64 chosen in the HUD, say) it is a message.
      if (options_.interop == Interop::on && generation_ == first_generation_)
        throw RuntimeFailure("--interop on: CUDA-GL interop unavailable: " + why);
      upload_ = "host upload (" + why + ")";
      if (options_.interop == Interop::on) tell("--interop on: now by host upload (" + why + ")");
    }
    if (upload_ != announced_) log("viewer: positions to GL by " + upload_);
    announced_ = upload_;
  }

  void update_follow() {
    if (!controls_.follow) return;
    if (auto const c = live_->centre()) camera_.set_target(glm::vec3(float(c->x), float(c->y), float(c->z)));
  }

  // Positions every new frame, colours when they change (every frame in speed mode). With interop
  // the positions and speed colours never leave the GPU.
  void upload_frame() {
    bool const speed = controls_.color == render::ColorMode::speed;
    bool const level = controls_.color == render::ColorMode::level;  // hermite4's levels change every frame
    live_->want_levels(level);
    bool const colors_uploaded = colors_dirty_;
    bool new_frame = false;
    std::size_t bodies = 0;
    // One lock for the whole frame: positions, velocities and sizes all of one generation. A frame
    // of a newer one waits for the next loop, which allocates for it first.
    live_->with_frame([&](std::uint64_t generation, const sim::BodySet& b, const render::DeviceFrames* f,
                          const std::vector<std::uint8_t>& levels) {
      if (generation != generation_ || generation == 0) return;  // 0: still starting, no bodies yet
      if (generation != types_generation_) {  // the legend of colour by type lists the types the run has
        types_present_ = render::types_present(b.type);
        types_generation_ = generation;
      }
      std::uint64_t const frame = live_->frame_number();
      new_frame = frame != last_frame_;
      last_frame_ = frame;
      bodies = b.size();
      if (fit_color_range_ && bodies > 0) {
        fit_color_range_ = false;
        controls_.color_range = interop_ && f ? interop_->fit_speed_range(f->velocities()) : render::fit_speed_range(b);
      }
      render::SpeedColoring const coloring{controls_.colormap, controls_.color_range};
      shown_coloring_ = coloring;
      if (interop_ && f) {
        if (new_frame) interop_->copy_positions(f->positions(), f->bodies() * 4 * sizeof(float));
        if (speed && (new_frame || colors_dirty_)) {
          interop_->color_by_speed(f->velocities(), coloring.map, coloring.range);
          colors_dirty_ = false;
        }
        if (colors_dirty_) {  // type and device colours do not move: from the host copy, once
          render::compute_colors(controls_.color, b, slices_, coloring, colors_);
          renderer_->upload_colors(colors_);
          colors_dirty_ = false;
        }
      } else if (!interop_ && (new_frame || colors_dirty_)) {
        positions_.resize(4 * bodies);
        for (std::size_t i = 0; i < bodies; ++i) {
          positions_[4 * i] = float(b.pos_mass[i].x);
          positions_[4 * i + 1] = float(b.pos_mass[i].y);
          positions_[4 * i + 2] = float(b.pos_mass[i].z);
          positions_[4 * i + 3] = float(b.pos_mass[i].w);
        }
        if (level) {
          render::compute_level_colors(levels, bodies, coloring.map, colors_);
          level_swatches_ = render::level_swatches(levels, coloring.map, running_.physics.hermite.dt_max,
                                                  running_.units);
        } else if (speed || colors_dirty_) {
          render::compute_colors(controls_.color, b, slices_, coloring, colors_);
        }
        renderer_->upload_positions(positions_.data(), bodies);
        if (speed || level || colors_dirty_) renderer_->upload_colors(colors_);
        colors_dirty_ = false;
      }
    });
    live_->frame_shown();
    shown_color_ = controls_.color;
    if (new_frame && trails_) trails_->record(renderer_->position_buffer(), bodies);
    if (new_frame || colors_uploaded) scene_changed_ = true;
  }

  // The steps the run made over the last two seconds, for the HUD's steps/s: what the user sees it
  // do. The simulation's own figure (1 / its time a step) is what it could do; beside a viewer that
  // steps one batch a frame, or paused, it can be several times the rate the run goes at.
  void count_steps(const LiveStats& s) {
    auto const now = Clock::now();
    if (!step_counts_.empty() && (s.generation != step_counts_generation_ || s.step < step_counts_.back().second))
      step_counts_.clear();
    step_counts_generation_ = s.generation;
    step_counts_.push_back({now, s.step});
    while (step_counts_.size() > 2 && std::chrono::duration<double>(now - step_counts_[1].first).count() > 2.0)
      step_counts_.pop_front();
  }
  double run_steps_per_s(const LiveStats& s) const {
    if (s.paused) return 0.0;
    if (step_counts_.size() < 2) return s.steps_per_s;
    double const seconds = std::chrono::duration<double>(step_counts_.back().first - step_counts_.front().first).count();
    if (seconds < 0.5) return s.steps_per_s;
    return double(step_counts_.back().second - step_counts_.front().second) / seconds;
  }

  render::HudStats hud_stats(const LiveStats& s) const {
    render::HudStats h;
    h.fps = fps_;
    h.steps_per_s = run_steps_per_s(s);
    h.step_ms = s.step_ms;
    h.render_ms = render_ms_;
    h.interactions_per_s = s.interactions_per_s;
    h.bodies = s.bodies;
    h.source = source_.find('/') == std::string::npos ? source_ : fs::path(source_).filename().string();
    // While a simulation starts, what it is doing in the source's place: one short line either way, so that the
    // controls below never move by a line as start-ups come and go (a click aimed at one landed on another).
    if (!s.starting.empty()) h.source = s.starting;
    h.description = s.description;
    h.upload = upload_;
    h.time = s.time;
    h.dt = s.block_steps ? 0.0 : s.dt;
    h.step = s.step;
    h.energy_error = s.energy_error;
    h.energy_time = s.energy_time;
    h.energy_due = s.energy_due;
    h.virial_ratio = s.virial_ratio;
    h.lagrangian_radii = s.lagrangian_radii;
    h.energy_tracked = energy_tracked_;
    h.paused = s.paused;
    h.exposure = shown_exposure_;
    for (auto const& m : messages_) h.messages.push_back(m.first);
    h.keys = keys_;
    h.overlay = render::describe_overlay(controls_.color, shown_coloring_, slices_.size(), s.time, h.dt, running_.units,
                                         camera_.world_per_pixel(float(surface_->height())), surface_->width());
    if (controls_.color == render::ColorMode::level) h.overlay->swatches = level_swatches_;
    if (controls_.color == render::ColorMode::type) h.overlay->swatches = render::type_swatches(types_present_);
    // The legend as the colours show under this frame's exposure, which brightens a dark colour of the map.
    h.overlay->tone = hdr_->tone(shown_exposure_, controls_.brightness);
    h.block_steps = s.block_steps;
    h.units = running_.units;
    return h;
  }

  // --screenshot on the last frame, every frame into --frames-dir, and the 'p' key's picture into
  // the output folder. A picture that cannot be written is a message, never the end of the session.
  void write_pictures(std::uint64_t frame, std::uint64_t frames) {
    int const w = surface_->width(), h = surface_->height();
    bool const last = !options_.screenshot.empty() && frame + 1 == frames;
    if (!last && options_.frames_dir.empty() && !screenshot_requested_) return;
    auto const pixels = render::read_pixels(w, h);
    if (last) {
      render::write_png(options_.screenshot, pixels, w, h);
      screenshot_written_ = true;
    }
    if (!options_.frames_dir.empty()) {
      render::write_png((fs::path(options_.frames_dir) / frame_file_name(frame)).string(), pixels, w, h);
    }
    if (screenshot_requested_) {
      screenshot_requested_ = false;
      std::string const path = timestamped(folder_, ".png", names_given_);
      try {
        render::write_png(path, pixels, w, h);
        tell("screenshot " + path);
        surface_->offer_file(path);
      } catch (const std::exception& e) {
        tell(std::string("screenshot not written: ") + e.what() + " (--screenshot-dir chooses the folder)");
      }
    }
  }

  // The latest completed positions drawn once more (the buffer last shown need not hold its picture
  // after present) and written as --screenshot, where the session ended before its last frame. A
  // failure is said, not thrown: the interrupt's exit code and the other outputs come first.
  void write_interrupted_screenshot() {
    try {
      upload_frame();
      camera_.set_aspect(aspect());
      if (!exposure_settled_) {
        draw_scene(0.0f);
        exposure_settled_ = true;
      }
      scene_changed_ = true;  // draw it, not the target kept from the last frame
      draw_scene(0.0f);
      hud_->draw(hud_stats(live_->stats()), controls_, scenarios_, max_devices_, surface_->width(), surface_->height(),
                 0.0f);
      render::finish_frame();
      int const w = surface_->width(), h = surface_->height();
      render::write_png(options_.screenshot, render::read_pixels(w, h), w, h);
      screenshot_written_ = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "viewer: --screenshot %s not written at the early end: %s\n", options_.screenshot.c_str(),
                   e.what());
    }
  }

  Options options_;
  std::function<void(const LiveStats&)> each_frame_;
  bool recording_ = false;
  render::Input held_input_;  // input polled while a recording waited for its simulation
  std::unique_ptr<render::Surface> surface_;
  std::unique_ptr<render::BodyRenderer> renderer_;
  std::unique_ptr<render::Hud> hud_;
  std::unique_ptr<render::HdrPipeline> hdr_;
  std::unique_ptr<render::TrailRenderer> trails_;
  std::unique_ptr<render::VideoEncoder> video_;
  render::AutoExposure exposure_;
  std::unique_ptr<render::CudaGlInterop> interop_;
  std::unique_ptr<LiveSimulation> live_;
  render::OrbitCamera camera_;
  render::HudControls controls_;
  std::vector<std::string> scenarios_;
  driver::RunConfig running_;
  // The run asked for last (settings() builds on it), the values the controls were last set to (what
  // differs from them the user changed), and the number of the last request (LiveStats::changes_done).
  driver::RunConfig requested_, shown_;
  std::size_t requested_bodies_ = 0;
  // The body count of the last run of many bodies asked for (--bodies, or the HUD's N): what a switch back from the
  // binary starts with, rather than the scenario's default.
  std::optional<std::size_t> many_bodies_;
  std::size_t bodies_to_confirm_ = 0;  // a body count said to take minutes a step: started when entered again
  std::chrono::steady_clock::time_point asked_at_{};  // when it was said
  std::uint64_t awaited_ = 0;
  bool softening_chosen_ = false;   // on the command line or in the HUD: kept across scenario switches
  bool point_size_chosen_ = false;  // the same for the sprites' size
  float default_point_size_ = 0;    // the size last chosen from N
  std::string source_, folder_, upload_, announced_, interop_failure_;
  std::set<std::string> names_given_;  // the keys' file names handed out (timestamped)
  std::vector<float> positions_;
  std::vector<Slice> slices_;  // the running simulation's slices, for colour by device
  std::vector<render::Rgba> colors_;
  render::ColorMode shown_color_ = render::ColorMode::speed;
  std::vector<render::Swatch> level_swatches_;  // the legend of colour by level, as of the last frame
  render::SpeedColoring shown_coloring_;  // the map and range of the colours uploaded last
  bool fit_color_range_ = true;           // the next frame fits the speed range (a new run, the HUD's "fit")
  std::deque<std::pair<std::string, Clock::time_point>> messages_;
  std::deque<std::pair<Clock::time_point, std::uint64_t>> step_counts_;  // (when, step), the last ~2 s
  std::uint64_t step_counts_generation_ = 0;
  int max_devices_ = 1;
  std::uint64_t refused_ = 0, first_generation_ = 0;
  std::optional<Edited> queued_;  // the settings edited during the start-up, applied once it runs
  bool requested_pause_ = false, vsync_ = true;
  std::uint64_t generation_ = 0, last_frame_ = ~std::uint64_t{0};
  double fps_ = 0, render_ms_ = 0;
  double recording_ms_ = 0;  // this frame's time in the video's or --frames-dir's add_frame (not render time)
  float shown_exposure_ = 1.0f;
  bool exposure_settled_ = false;
  // What the HDR target holds: drawn with this camera and these sprite settings, at this size (SceneKey).
  SceneKey shown_scene_;
  bool scene_changed_ = true;  // new positions or colours since the target was drawn
  // Drawing on demand (frame_wanted): what the last frame showed of the run, and when input came.
  struct ShownStats {
    bool paused = false;
    std::uint64_t step = 0, generation = 0;
    std::string starting;
  };
  ShownStats shown_stats_;
  Clock::time_point shown_at_ = Clock::now(), input_at_{};
  std::uint64_t settle_until_frame_ = 0;  // input: frames up to this count drawn whatever else changes
  bool hud_changed_ = false;              // a message came or went, the run or the controls changed
  bool exposure_adapting_ = false;        // frames drawn for the exposure (exposure_adapting)
  bool energy_tracked_ = true;
  bool colors_dirty_ = true, screenshot_requested_ = false, quit_ = false, fullscreen_ = false;
  bool served_ = false;     // a front end's surface (--serve): the HUD is seen by others
  std::vector<std::pair<std::string, std::string>> keys_ = kViewerKeys;  // the HUD's Keys: those that do something
  bool unwatched_ = false;  // the last pass drew nothing: no one watched (--serve with no browser)
  unsigned types_present_ = 0b111;  // the body types of generation types_generation_ (a bit each)
  std::uint64_t types_generation_ = 0;
  bool screenshot_written_ = false, reset_view_ = false;
  // Trails on because the run is the binary, not by the user's choice (the 't' key, the HUD, --trails); and the
  // trails setting the viewer last saw, to tell the user's changes.
  bool trails_for_binary_ = false, trails_before_ = false;
};

}  // namespace

bool viewer_available() { return true; }

namespace {
// Ranks other than 0 of an MPI run: no window; the same simulation, carrying out rank 0's plans.
int follow_viewer(const Options& o) {
  LiveSimulation live(o.run, std::nullopt, true);  // started when rank 0's first plan says so
  try {
    return live.follow();
  } catch (const Interrupted& e) {
    // An interrupt the ranks met together (agree(), hermite4's passes in chunks): rank 0's viewer takes
    // it on its simulation thread and goes on to its own end, which this rank cannot wait for here; the job ends from
    // this rank (main: an abort), at once.
    throw Interrupted(e.signal);
  }
}
}  // namespace

namespace {

// `default_mode`: the window is the default mode's choice, which runs the benchmark where it cannot open
// (render::WindowUnavailable passes to it).
int open_viewer(const Options& options, bool default_mode) {
  // Bad input is refused before a window opens (the bodies are made once it shows).
  agree(world(), [&] { driver::check_setup(options.run); });
  if (world().rank() != 0) return follow_viewer(options);
  check_interop_on(options);
  std::optional<Viewer> viewer;
  try {
    viewer.emplace(options);
  } catch (const render::WindowUnavailable& e) {
    if (default_mode) throw;
    // A display that is named but cannot be opened (a DISPLAY left from another session, a server gone, no GLX) is
    // the same case as none: exit 2, and the way to render without one.
    throw no_window(options, e.what());
  }
  return viewer->run();
}

}  // namespace

int run_viewer(const Options& options) { return open_viewer(options, false); }

int run_viewer_session(const Options& options, std::unique_ptr<render::Surface> surface,
                       std::function<void(const LiveStats&)> each_frame) {
  if (world().rank() != 0) return follow_viewer(options);
  Viewer viewer(options, std::move(surface), std::move(each_frame));
  return viewer.run();
}

int run_default_mode(const Options& options) {
  if (display_available() && world().size() == 1) {
    try {
      return open_viewer(options, true);
    } catch (const render::WindowUnavailable& e) {
      // A DISPLAY left over from another session, a server gone: the benchmark, as without a display.
      return run_benchmark_instead(options, e.what());
    }
  }
  return run_benchmark_instead(options, "no display (DISPLAY/WAYLAND_DISPLAY unset)");
}

}  // namespace nbody::app

#else  // built without the viewer's libraries

#include <iostream>
#include <set>

#include "core/errors.h"

namespace nbody::app {
bool viewer_available() { return false; }
int run_viewer(const Options&) {
  throw InputError("--viewer: this nbody was built without the viewer (GLFW, GLEW, GLM, Dear ImGui and stb were "
                   "not found); install them (scripts/install-deps.sh) and rebuild");
}
int run_default_mode(const Options& options) {
  return run_benchmark_instead(options, display_available() ? "this nbody was built without the viewer"
                                                            : "no display (DISPLAY/WAYLAND_DISPLAY unset)");
}
}  // namespace nbody::app

#endif
