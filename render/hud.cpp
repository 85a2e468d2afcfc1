// render/hud.cpp - HUD with Dear ImGui (Debian's libimgui-dev and its GLFW/OpenGL3 backends).
#include "render/hud.h"

#define GLFW_INCLUDE_NONE  // the key callback only: GL comes through the ImGui backend
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <sstream>
#include <string>
#include <vector>

#include "core/bounds.h"
#include "render/annotations.h"

namespace nbody::render {

namespace {

std::string shown(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The edit of the field just drawn, held to what the command line accepts for it: the value it had
// when the edit began (`was`: before the widget was drawn this frame, for a slider sets its value in the
// frame of the click that begins the edit) is kept; when the edit ends, a new value is checked
// (`problem`: why it cannot be, or ""). True for a new value accepted. A refused one goes back to the
// old, saying why in `refused`; an edit given up (Escape) or ending where it began changes nothing.
template <class T, class Problem>
bool checked_edit(std::map<std::string, double>& before, const char* name, const char* option, T was, T& value,
                  Problem problem, std::string& refused) {
  if (ImGui::IsItemActivated()) before[name] = double(was);
  if (!ImGui::IsItemDeactivated()) return false;
  auto const it = before.find(name);
  if (it == before.end()) return false;
  T const old = T(it->second);
  before.erase(it);
  if (value == old) return false;
  std::string const why = problem(value);
  if (why.empty()) return true;
  refused = std::string(name) + " " + shown(double(value)) + " refused: " + why + " (as " + option + "); " + name +
            " stays " + shown(double(old));
  value = old;
  return false;
}

// No bound here (checked where the value is used).
struct NoBound {
  template <class T>
  std::string operator()(T) const {
    return {};
  }
};

// (0, most]: the command line's "above 0, at most" bounds.
auto positive_up_to(double most) {
  return [most](double v) { return v > 0 && v <= most ? std::string() : "must be above 0 and at most " + shown(most); };
}

auto whole_from_1_to(long long most) {
  return [most](long long v) {
    return v >= 1 && v <= most ? std::string() : "must be a whole number from 1 to " + std::to_string(most);
  };
}

// Keys pressed and let go between two frames (a tap shorter than a frame, or a program's synthetic key): the ImGui of
// Debian (1.86) reads each key's state once a frame, so such a key was never seen down, and an Enter typed to apply a
// value was lost. A release of a key pressed since the last frame waits for the frame that sees it down, and every key
// event after it waits in turn behind it, in order: a chord keeps its modifier (Ctrl let go after a tapped A), and a
// key tapped twice is pressed once a frame. One HUD of a window a process.
struct HeldBackKeys {
  GLFWkeyfun imgui = nullptr;                // the backend's callback (which passes every key on to the window's)
  GLFWwindow* window = nullptr;
  std::vector<int> pressed;                  // given since the last frame
  std::deque<std::array<int, 4>> waiting;    // key, scancode, action, mods: not given yet
};
HeldBackKeys held_back;

// Gives the waiting key events in order, up to the release of a key this frame has seen pressed.
void give_waiting_keys() {
  auto& k = held_back;
  while (!k.waiting.empty()) {
    auto const [key, scancode, action, mods] = k.waiting.front();
    if (action == GLFW_RELEASE && std::find(k.pressed.begin(), k.pressed.end(), key) != k.pressed.end()) return;
    k.waiting.pop_front();
    if (action == GLFW_PRESS) k.pressed.push_back(key);
    if (k.imgui) k.imgui(k.window, key, scancode, action, mods);
  }
}

void hold_back_key_callback(GLFWwindow* window, int key, int scancode, int action, int mods) {
  held_back.window = window;
  held_back.waiting.push_back({key, scancode, action, mods});
  give_waiting_keys();
}

// A line of the panel whose words are never broken (panel_lines: between figures where it can). ImGui's own wrapping
// breaks after a '.', inside a number ("2." above "684e+09"), and inside a word too long for the line.
void unbroken_words(const std::string& text) {
  auto const width = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
  for (auto const& line : panel_lines(text, ImGui::GetContentRegionAvail().x, width)) ImGui::TextUnformatted(line.c_str());
}

}  // namespace

Hud::Hud(GLFWwindow* window) : window_(window) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini next to the user's files
  ImGui::StyleColorsDark();
  if (window) {
    platform_ = ImGui_ImplGlfw_InitForOpenGL(window, true);
    held_back = HeldBackKeys{};
    held_back.window = window;
    held_back.imgui = glfwSetKeyCallback(window, hold_back_key_callback);
  }
  ImGui_ImplOpenGL3_Init("#version 330");
  char const* trace = std::getenv("NBODY_TRACE_UI");
  trace_ = trace && *trace && std::string(trace) != "0";
}

Hud::~Hud() {
  if (window_) glfwSetKeyCallback(window_, held_back.imgui);  // the backend's, which its shutdown replaces
  ImGui_ImplOpenGL3_Shutdown();
  if (platform_) ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
}

bool Hud::wants_mouse() const { return ImGui::GetIO().WantCaptureMouse; }
// An open pop-up (a drop-down list) takes the keys too: Escape closes it, and never the viewer.
bool Hud::wants_keyboard() const {
  return ImGui::GetIO().WantCaptureKeyboard ||
         ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel);
}

void Hud::draw(const HudStats& s, HudControls& c, const std::vector<std::string>& scenarios, int max_devices,
               int width, int height, float frame_seconds) {
  if (first_frame_) {
    // An auto-sized window is hidden on its first frame while it measures itself: lay out one
    // frame without drawing it, so a single-frame screenshot shows the HUD too.
    first_frame_ = false;
    HudControls scratch = c;
    layout(s, scratch, scenarios, max_devices, width, height, frame_seconds);
    ImGui::Render();
  }
  layout(s, c, scenarios, max_devices, width, height, frame_seconds);
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  // This frame saw the keys pressed since the last: the events held back behind their releases go on now.
  if (window_) {
    held_back.pressed.clear();
    give_waiting_keys();
  }
}

void Hud::layout(const HudStats& s, HudControls& c, const std::vector<std::string>& scenarios, int max_devices,
                 int width, int height, float frame_seconds) {
  ImGui_ImplOpenGL3_NewFrame();
  if (platform_) {
    ImGui_ImplGlfw_NewFrame();
  } else {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(float(width), float(height));
    io.DeltaTime = frame_seconds > 0 ? frame_seconds : 1.0f / 60.0f;
  }
  ImGui::NewFrame();
  if (c.hud != HudMode::none && s.overlay) {
    ImVec2 const size = ImGui::GetIO().DisplaySize;
    draw_overlay(*s.overlay, int(size.x), int(size.y));
  }
  if (c.hud != HudMode::full) return;
  // The last widget's rectangle on stderr whenever it moves, when NBODY_TRACE_UI is set: tests that
  // drive the viewer with synthetic clicks find the widgets there (the newest line for a label is
  // where it is now) instead of guessing.
  auto trace_rect = [&](const char* label, ImVec2 at, ImVec2 size) {
    std::array<int, 4> const rect{int(at.x), int(at.y), int(size.x), int(size.y)};
    auto [it, added] = traced_.try_emplace(label, rect);
    if (!added && it->second == rect) return;
    it->second = rect;
    std::fprintf(stderr, "ui: %s %d %d %d %d\n", label, rect[0], rect[1], rect[2], rect[3]);
  };
  auto trace = [&](const char* label) {
    if (!trace_) return;
    ImVec2 const lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    trace_rect(label, lo, ImVec2(hi.x - lo.x, hi.y - lo.y));
  };
  // A check box: its place, and its state whenever it changes ("ui-value: trails 1").
  auto trace_box = [&](const char* label, bool value) {
    trace(label);
    if (!trace_) return;
    auto [it, added] = traced_values_.try_emplace(label, int(value));
    if (!added && it->second == int(value)) return;
    it->second = int(value);
    std::fprintf(stderr, "ui-value: %s %d\n", label, int(value));
  };
  // A line of text whenever it changes ("ui-text: source starting: forces of 2,000,000 bodies").
  auto trace_text = [&](const char* label, const std::string& text) {
    if (!trace_) return;
    auto [it, added] = traced_texts_.try_emplace(label, text);
    if (!added && it->second == text) return;
    it->second = text;
    std::fprintf(stderr, "ui-text: %s %s\n", label, text.c_str());
  };
  // A narrow panel in the corner: the middle of the view stays on the bodies.
  float panel = std::min(330.0f, 0.45f * float(width)), top = 8.0f;
  // Clear of the time stamp in the top right corner (a small frame: 320 pixels wide, the panel covered it): narrowed
  // to end short of it, down to kNarrowest, and below it where that is still too wide.
  constexpr float kNarrowest = 120.0f, kGap = 6.0f;
  if (s.overlay) {
    auto const time = overlay_time_rect(*s.overlay, width, height);
    float const room = time[0] - kGap - top;
    if (panel > room && room >= kNarrowest) panel = room;
    else if (panel > room) top = time[1] + time[3] + kGap;
  }
  // Down to just above the scale bar (the overlay's bottom left corner), scrolling beyond.
  float const bottom = s.overlay ? overlay_layout(width, height).bar[1] - 4.0f : 0.97f * float(height);
  ImGui::SetNextWindowPos(ImVec2(8, top), ImGuiCond_Always);
  ImGui::SetNextWindowSizeConstraints(ImVec2(panel, 0), ImVec2(panel, std::max(bottom - top, 120.0f)));
  ImGui::SetNextWindowBgAlpha(0.6f);
  ImGui::Begin("nbody", nullptr,
               ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoSavedSettings);
  ImGui::PushTextWrapPos(0.0f);
  // The widgets leave room for their labels (the longest, "dt max/update"), which a narrow panel (a 640-pixel window)
  // cut to "scenari" and "steps/u" at ImGui's default of two thirds of the panel for the widget.
  ImGui::PushItemWidth(-(ImGui::CalcTextSize("dt max/update").x + ImGui::GetStyle().ItemInnerSpacing.x));
  // Short lines, each well inside the panel: a line that wrapped or not with the width of its numbers
  // moved every control below it by a line between two refreshes of the figures (and a click aimed at
  // one landed on another).
  // Paused, frames are drawn only when something changes: a rate would be the one from before the pause.
  char frames[96];
  if (s.paused)
    std::snprintf(frames, sizeof frames, "frames on change   render %.3g ms", s.render_ms);
  else if (s.fps == 0 && s.render_ms == 0)  // the first frame: nothing measured yet (not a rate of 0)
    std::snprintf(frames, sizeof frames, "frames drawn/s and render time: measuring");
  else
    std::snprintf(frames, sizeof frames, "%.0f frames drawn/s   render %.3g ms", s.fps, s.render_ms);
  unbroken_words(frames);
  unbroken_words(panel_rate_line(s.steps_per_s, s.step_ms, s.block_steps));
  unbroken_words(panel_bodies_line(s.bodies, s.interactions_per_s, s.step_ms));
  unbroken_words(s.source);
  trace_text("source", s.source);
  // hermite4: the block time, every body predicted to it; each body keeps its own step. With a physical scale the
  // times and radii read in its units, as the overlay's time stamp and scale bar do. The count of steps below it
  // changes with every step, where a time of many digits may not.
  unbroken_words(panel_time_line(s.time, s.block_steps, s.dt, s.units));
  unbroken_words(panel_step_line(s.step, s.block_steps, s.paused));
  if (s.energy_error)
    unbroken_words(panel_energy_line(*s.energy_error, s.energy_time, s.block_steps ? 0.0 : s.dt, s.units));
  else if (s.energy_tracked)
    unbroken_words(panel_energy_wait_line(s.paused, s.energy_due, s.units));
  else
    unbroken_words("energy: not tracked at this N");
  if (s.virial_ratio) {  // measured with the energy, as the radii: at its time, which a paused run may have passed
    char virial[48];
    std::snprintf(virial, sizeof virial, "2K/|W| = %.3f at that t", *s.virial_ratio);
    unbroken_words(std::isnan(*s.virial_ratio) ? "2K/|W| undefined (W = 0)" : virial);
    unbroken_words(panel_radii_line(s.lagrangian_radii, s.units));
  }
  ImGui::PopTextWrapPos();

  bool const simulation_open = ImGui::CollapsingHeader("Simulation");
  trace("Simulation");
  if (simulation_open) {
    if (ImGui::Button(c.paused ? "Resume" : "Pause")) c.paused = !c.paused;
    ImGui::SameLine();
    if (ImGui::Button("Step")) ++c.steps_asked;
    ImGui::SameLine();
    if (ImGui::Button("Reset")) c.reset = true;
    ImGui::SameLine();
    if (ImGui::Button("Save")) c.save = true;
    trace("Save");
    bool const scenario_list =
        !scenarios.empty() &&
        ImGui::BeginCombo("scenario", scenarios[std::size_t(std::clamp(c.scenario, 0, int(scenarios.size()) - 1))].c_str());
    // The list's first frame is laid out hidden, elsewhere: its items are traced from the frame it shows in.
    bool list_shown = false;
    if (scenario_list) {
      list_shown = !ImGui::IsWindowAppearing();
      for (std::size_t k = 0; k < scenarios.size(); ++k) {
        if (ImGui::Selectable(scenarios[k].c_str(), int(k) == c.scenario)) c.scenario = int(k), c.reset = true;
        if (list_shown) trace(scenarios[k].c_str());
      }
      ImGui::EndCombo();
    }
    trace_box("scenario", list_shown);  // and whether its list shows: a script clicks an item only then
    // Edits take effect when they end, and only with a new value the command line would accept too:
    // Escape, or a value set back to what it was, changes nothing (no new run, the energy's reference
    // kept). N is checked against its bounds when the run is made (a message if it cannot be).
    auto const bodies_was = c.bodies;
    ImGui::InputScalar("N", ImGuiDataType_S64, &c.bodies);
    trace("N");
    if (checked_edit(before_edit_, "N", "--bodies", bodies_was, c.bodies, NoBound{}, c.refused)) c.reset = true;
    // hermite4 chooses each body's step: what it has of a dt is the longest step, dt_max (default 1/16).
    double const dt_range[2] = {1e-4, c.block_steps ? 1.0 : 0.05}, softening_range[2] = {1e-4, 0.5},
                 damping_range[2] = {0.9, 1.0};
    char const* const dt_label = c.block_steps ? "dt max" : "dt";
    double const dt_was = c.dt;
    ImGui::SliderScalar(dt_label, ImGuiDataType_Double, &c.dt, &dt_range[0], &dt_range[1], "%.4g",
                        ImGuiSliderFlags_Logarithmic);
    trace(dt_label);
    // The reason alone, as dt_problem gives it: checked_edit names the value and the option.
    auto const dt_check = [&](double v) -> std::string {
      if (!c.block_steps) return dt_problem(v);
      return dt_max_problem(v).empty() ? std::string() : std::string("must be in ") + kDtMaxRange;
    };
    if (checked_edit(before_edit_, dt_label, c.block_steps ? "--dt-max" : "--dt", dt_was, c.dt, dt_check, c.refused))
      c.apply = true;
    double const softening_was = c.softening;
    ImGui::SliderScalar("softening", ImGuiDataType_Double, &c.softening, &softening_range[0], &softening_range[1],
                        "%.4g", ImGuiSliderFlags_Logarithmic);
    trace("softening");
    Precision const precision = c.precision ? Precision::fp64 : Precision::fp32;
    if (checked_edit(before_edit_, "softening", "--softening", softening_was, c.softening,
                     [&](double v) { return softening_problem(v, precision); }, c.refused))
      c.apply = c.softening_edited = true;
    if (c.damping_applies) {
      double const damping_was = c.damping;
      ImGui::SliderScalar("damping", ImGuiDataType_Double, &c.damping, &damping_range[0], &damping_range[1], "%.4f");
      if (checked_edit(before_edit_, "damping", "--damping", damping_was, c.damping, damping_problem, c.refused))
        c.apply = true;
    }
    if (ImGui::Combo("precision", &c.precision, "fp32\0fp64\0")) c.apply = true;
    // hermite4's frames are spans of its longest step, each ending with every body at one time.
    char const* const steps_label = c.block_steps ? "dt max/update" : "steps/update";
    int const steps_per_update_was = c.steps_per_update;
    ImGui::SliderInt(steps_label, &c.steps_per_update, 1, 50);
    trace(steps_label);
    checked_edit(before_edit_, steps_label, "--steps-per-frame", steps_per_update_was, c.steps_per_update,
                 whole_from_1_to(kMaxStepsPerFrame), c.refused);
  }
  bool const view_open = ImGui::CollapsingHeader("View");
  trace("View");
  if (view_open) {
    int color = int(c.color);
    if (ImGui::Combo("colour", &color, "speed\0type / mass\0owning device\0time-step level\0"))
      c.color = ColorMode(color);
    if (c.color == ColorMode::level) {
      int map = int(c.colormap);
      if (ImGui::Combo("colour map", &map, "viridis\0inferno\0magma\0plasma\0classic\0")) c.colormap = Colormap(map);
    }
    if (c.color == ColorMode::speed) {
      int map = int(c.colormap);
      if (ImGui::Combo("colour map", &map, "viridis\0inferno\0magma\0plasma\0classic\0")) c.colormap = Colormap(map);
      // The range in the legend's units; fixed once edited (the next runs keep it) until "fit".
      double const f = s.overlay ? s.overlay->speed_unit.factor : 1.0;
      float lo = float(c.color_range.min * f), hi = float(c.color_range.max * f);
      float const speed = std::max(std::abs(hi - lo), 1e-6f) * 0.005f;
      // Narrowed by the "fit" button beside it, which would otherwise pass the panel's edge.
      ImGuiStyle const& style = ImGui::GetStyle();
      float const fit_width = ImGui::CalcTextSize("fit").x + 2.0f * style.FramePadding.x + style.ItemSpacing.x;
      ImGui::SetNextItemWidth(ImGui::CalcItemWidth() - fit_width);
      // Speeds: from 0 (as --color-range takes them).
      if (ImGui::DragFloatRange2("speed range", &lo, &hi, speed, 0.0f, 1e12f, "%.4g", "%.4g") && lo < hi) {
        c.color_range = {float(lo / f), float(hi / f)};
        c.color_range_fixed = true;
      }
      trace("speed range");
      ImGui::SameLine();
      if (ImGui::Button("fit")) c.fit_color_range = true;
    }
    int hud = int(c.hud);
    if (ImGui::Combo("HUD", &hud, "full\0minimal (legend, time, scale)\0none\0")) c.hud = HudMode(hud);
    float const point_size_was = c.point_size, brightness_was = c.brightness;
    ImGui::SliderFloat("point size", &c.point_size, 0.5f, 64.0f, "%.1f", ImGuiSliderFlags_Logarithmic);
    checked_edit(before_edit_, "point size", "--point-size", point_size_was, c.point_size,
                 positive_up_to(kMaxPointSize), c.refused);
    ImGui::SliderFloat("brightness", &c.brightness, 0.05f, 20.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
    checked_edit(before_edit_, "brightness", "--brightness", brightness_was, c.brightness,
                 positive_up_to(kMaxBrightness), c.refused);
    ImGui::Checkbox("auto exposure", &c.auto_exposure);
    ImGui::SameLine();
    ImGui::Text("(%.3g)", s.exposure);
    // The range AutoExposure accepts for its factor (kMinManual, kMaxManual).
    ImGui::SliderFloat(c.auto_exposure ? "exposure x" : "exposure", &c.exposure, 1.0f / 64.0f, 64.0f, "%.3f",
                       ImGuiSliderFlags_Logarithmic);
    ImGui::Checkbox("trails", &c.trails);
    trace_box("trails", c.trails);
    ImGui::SameLine();
    ImGui::Checkbox("follow", &c.follow);
    ImGui::SameLine();
    ImGui::Checkbox("vsync", &c.vsync);
    if (ImGui::Button("Screenshot")) c.screenshot = true;
  }
  bool const devices_open = max_devices > 1 && ImGui::CollapsingHeader("Devices");
  if (max_devices > 1) trace("Devices");
  if (devices_open) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(s.description.c_str());
    ImGui::TextUnformatted(("positions to GL: " + s.upload).c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Combo("threading", &c.threading, "single\0workers\0")) c.apply = true;
    int const devices_was = c.devices;
    ImGui::SliderInt("devices", &c.devices, 1, max_devices);
    // Once, when the drag ends; more than the slider shows may be typed, as --numgpus takes them (a
    // GPU count the machine lacks is then refused by the run, with a message).
    if (checked_edit(before_edit_, "devices", "--numgpus", devices_was, c.devices, whole_from_1_to(kMaxDevices),
                     c.refused))
      c.apply = true;
  }
  bool const keys_open = ImGui::CollapsingHeader("Keys");
  trace("Keys");
  if (keys_open) {
    ImGui::PushTextWrapPos(0.0f);
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_SizingFixedFit)) {
      ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
      ImGui::TableSetupColumn("does", ImGuiTableColumnFlags_WidthStretch);
      for (auto const& [key, does] : s.keys) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushTextWrapPos(-1.0f);  // the key whole: its column is as wide as the widest
        ImGui::TextUnformatted(key.c_str());
        trace(("key " + key).c_str());
        ImGui::PopTextWrapPos();
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", does.c_str());
      }
      ImGui::EndTable();
    }
    if (max_devices <= 1) {
      ImGui::TextUnformatted(s.description.c_str());
      ImGui::TextUnformatted(("positions to GL: " + s.upload).c_str());
    }
    ImGui::PopTextWrapPos();
  }
  // Messages last, below every control: one appearing never moves a widget under the pointer.
  if (!s.messages.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.4f, 1.0f));
    unbroken_words(s.messages.back());  // (a word wider than the panel, a long file name, wraps inside)
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
  }
  ImGui::PopItemWidth();
  // The panel itself, as a widget is traced ("ui: panel X Y W H"): a test sees it fit its content.
  if (trace_) trace_rect("panel", ImGui::GetWindowPos(), ImGui::GetWindowSize());
  ImGui::End();
}

}  // namespace nbody::render
