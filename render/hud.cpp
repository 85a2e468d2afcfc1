// render/hud.cpp - HUD with Dear ImGui (Debian's libimgui-dev and its GLFW/OpenGL3 backends).
#include "render/hud.h"

#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <cstdio>

namespace nbody::render {

Hud::Hud(GLFWwindow* window) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini next to the user's files
  ImGui::StyleColorsDark();
  if (window) platform_ = ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");
}

Hud::~Hud() {
  ImGui_ImplOpenGL3_Shutdown();
  if (platform_) ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
}

bool Hud::wants_mouse() const { return ImGui::GetIO().WantCaptureMouse; }
bool Hud::wants_keyboard() const { return ImGui::GetIO().WantCaptureKeyboard; }

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
  if (!c.hidden) {
    ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.75f);
    ImGui::Begin("nbody", nullptr, ImGuiWindowFlags_AlwaysAutoResize);
    ImGui::Text("%.1f FPS   step %.3f ms   render %.3f ms", s.fps, s.step_ms, s.render_ms);
    ImGui::Text("%.3e interactions/s   N = %zu", s.interactions_per_s, s.bodies);
    ImGui::Text("%s, %s, %s", s.backend.c_str(), s.kernel.c_str(), s.precision.c_str());
    ImGui::Text("devices: %s   threading: %s", s.devices.c_str(), s.threading.c_str());
    ImGui::Text("positions to GL: %s", s.upload.c_str());
    if (s.energy_known)
      ImGui::Text("t = %.4f   energy error %.3e", s.time, s.energy_error);
    else
      ImGui::Text("t = %.4f   energy: not tracked at this N on this backend", s.time);
    ImGui::Separator();
    if (ImGui::Button(c.paused ? "Resume" : "Pause")) c.paused = !c.paused;
    ImGui::SameLine();
    if (ImGui::Button("Step")) c.step_once = true;
    ImGui::SameLine();
    if (ImGui::Button("Reset")) c.reset = true;
    std::vector<const char*> names;
    for (auto const& n : scenarios) names.push_back(n.c_str());
    if (!names.empty() && ImGui::Combo("scenario", &c.scenario, names.data(), int(names.size()))) c.reset = true;
    ImGui::SliderFloat("dt", &c.dt, 1e-4f, 0.05f, "%.4f", ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemDeactivatedAfterEdit()) c.apply = true;
    ImGui::SliderFloat("softening", &c.softening, 1e-4f, 0.5f, "%.4f", ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemDeactivatedAfterEdit()) c.apply = true;
    ImGui::SliderInt("steps/frame", &c.steps_per_frame, 1, 50);
    ImGui::SliderFloat("point size", &c.point_size, 0.5f, 64.0f, "%.1f", ImGuiSliderFlags_Logarithmic);
    ImGui::SliderFloat("brightness", &c.brightness, 0.05f, 2.0f);
    int color = int(c.color);
    if (ImGui::Combo("colour", &color, "speed\0type / mass\0owning device\0")) c.color = ColorMode(color);
    if (max_devices > 1) {
      if (ImGui::Combo("threading", &c.threading, "single\0workers\0")) c.apply = true;
      if (ImGui::SliderInt("devices", &c.devices, 1, max_devices)) c.apply = true;
    }
    ImGui::Checkbox("vsync", &c.vsync);
    ImGui::Separator();
    ImGui::TextUnformatted(s.help.c_str());
    ImGui::End();
  }
}

}  // namespace nbody::render
