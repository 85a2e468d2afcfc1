// app/serve.cpp - `nbody --serve [HOST:]PORT`: the viewer (app/viewer.cpp, unchanged) drawn into an
// EGL pbuffer whose input comes from a browser and whose frames go to it as JPEG over a WebSocket
// (app/web_server.h). The browser's pointer, wheel and keys reach Dear ImGui and the camera as the
// GLFW backend's would, so every HUD control works from the page with no second UI.
//
// Threads: the render loop (this one: GL, ImGui, the camera), the simulation (LiveSimulation's),
// the encoder (JPEG), the network (Asio). Each hand-over holds only the newest item: the render loop
// never waits for the encoder or a viewer, and the simulation never waits for either.
#include "app/modes.h"

#if defined(NBODY_HAVE_VIEWER) && defined(NBODY_HAVE_SERVE)

#include <GL/glew.h>
#include <imgui.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>
#include <type_traits>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>
#include <variant>
#include <vector>

#include "app/serve_protocol.h"
#include "app/viewer_session.h"
#include "app/web_server.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/ranks.h"
#include "driver/setup.h"
#include "render/surface.h"

// The page, embedded at build time from web/viewer.html (app/CMakeLists.txt).
extern const unsigned char kServePage[];
extern const std::size_t kServePageSize;

namespace nbody::app {
namespace {

using namespace serve;

constexpr int kJpegQuality = 80;  // sharp sprites and HUD text at about 0.1 byte a pixel
constexpr double kKeepAliveSeconds = 1.0;  // a still picture is sent again this often

// A frame read back from GL, bottom row first, RGBA, with what it shows.
struct RawFrame {
  std::vector<std::uint8_t> rgba;
  FrameHeader header;
};

// Compresses the newest frame read back and hands it to the server, on a thread of its own. A
// frame that arrives while another is compressed replaces the one waiting: the render loop never
// waits here.
class Encoder {
 public:
  Encoder(WebServer& server, Clock::time_point origin) : server_(server), origin_(origin) {
    compressor_ = tjInitCompress();
    if (!compressor_) throw RuntimeFailure(std::string("--serve: libturbojpeg: ") + tjGetErrorStr());
    thread_ = std::thread([this] { run(); });
  }
  ~Encoder() {
    closing_ = true;
    slot_.close();
    thread_.join();
    tjDestroy(compressor_);
  }
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  void put(std::unique_ptr<RawFrame> frame) { slot_.put(std::move(frame)); }
  // A frame's buffer to fill again (none at first): frames of hundreds of kilobytes to megabytes,
  // sixty a second, are not allocated (and page-faulted) anew each time.
  std::unique_ptr<RawFrame> spare() {
    auto taken = spares_.try_take();
    return taken && *taken ? std::move(*taken) : std::make_unique<RawFrame>();
  }

 private:
  // A frame that shows what the last one sent showed (the HUD's figures redrawn as they were, no new
  // input) is not sent again.
  bool same_as_sent(const RawFrame& f) const {
    if (!sent_) return false;
    FrameHeader const &a = f.header, &b = sent_->header;
    return a.width == b.width && a.height == b.height && a.last_input == b.last_input && a.step == b.step &&
           a.bodies == b.bodies && a.flags == b.flags && f.rgba == sent_->rgba;
  }

  void run() {
    while (!closing_.load()) {
      auto taken = slot_.take(std::chrono::milliseconds(200));  // bounded: closing is seen within it
      std::unique_ptr<RawFrame> frame = taken && *taken ? std::move(*taken) : nullptr;
      if (frame && same_as_sent(*frame)) spares_.put(std::move(frame));
      if (!frame) {
        // The viewer draws only what changes: with nothing new, the last frame goes out again once a
        // second, the same bytes and sequence number, so a page knows the server is there (and says
        // the picture is still, web/viewer.html).
        if (published_ && std::chrono::duration<double>(Clock::now() - sent_at_).count() >= kKeepAliveSeconds) {
          server_.publish(published_);
          sent_at_ = Clock::now();
        }
        continue;
      }
      int const w = int(frame->header.width), h = int(frame->header.height);
      // Into a buffer of the largest size a JPEG of this frame can have: libjpeg-turbo allocates nothing.
      jpeg_.resize(tjBufSize(w, h, TJSAMP_420));
      unsigned char* jpeg = jpeg_.data();
      unsigned long size = jpeg_.size();
      if (tjCompress2(compressor_, frame->rgba.data(), w, w * 4, h, TJPF_RGBA, &jpeg, &size, TJSAMP_420, kJpegQuality,
                      TJFLAG_BOTTOMUP | TJFLAG_FASTDCT | TJFLAG_NOREALLOC) != 0) {
        std::cerr << "serve: a frame not encoded: " << tjGetErrorStr2(compressor_) << "\n";
        continue;
      }
      frame->header.encoded_us = std::uint64_t(1e6 * std::chrono::duration<double>(Clock::now() - origin_).count());
      auto bytes = std::make_shared<std::vector<std::uint8_t>>(kFrameHeaderBytes + size);
      write_frame_header(frame->header, bytes->data());
      std::copy(jpeg, jpeg + size, bytes->data() + kFrameHeaderBytes);
      published_ = bytes;
      server_.publish(std::move(bytes));
      if (sent_) spares_.put(std::move(sent_));
      sent_ = std::move(frame);
      sent_at_ = Clock::now();
    }
  }

  WebServer& server_;
  Clock::time_point origin_;
  tjhandle compressor_ = nullptr;
  LatestSlot<std::unique_ptr<RawFrame>> slot_, spares_;
  std::unique_ptr<RawFrame> sent_;  // the last frame sent, as read back (encoder thread)
  FrameBytes published_;            // and as sent
  Clock::time_point sent_at_;       // when it (or its keep-alive) last went out
  std::vector<unsigned char> jpeg_;
  std::atomic<bool> closing_{false};
  std::thread thread_;
};

// The viewer's surface for browsers: an EGL pbuffer as large as the largest frame, drawn in the
// corner the steering browser's size asks for; input from the network; present() reads the frame
// back for the encoder when anyone watches.
class BrowserSurface final : public render::Surface {
 public:
  BrowserSurface(WebServer& server, int width, int height)
      : offscreen_(render::open_offscreen(kMaxFrameWidth, kMaxFrameHeight, "--serve")),
        server_(server),
        origin_(Clock::now()),
        encoder_(server, origin_),
        width_(std::clamp(width, kMinFrameSide, kMaxFrameWidth)),
        height_(std::clamp(height, kMinFrameSide, kMaxFrameHeight)) {}

  int width() const override { return width_; }
  int height() const override { return height_; }
  bool should_close() const override { return false; }  // Ctrl-C or SIGTERM ends the server

  // The browser's events since the last frame, to ImGui (as its GLFW backend feeds it) and to the
  // camera (as render/glfw_surface.cpp gathers them). A button or key that goes down and up between
  // two frames would never be seen down by ImGui: the release, and what follows, wait a frame.
  render::Input poll() override {
    ImGuiIO& io = ImGui::GetIO();
    if (!keys_mapped_) {
      for (int k = 0; k < int(Key::count); ++k) io.KeyMap[imgui_key(Key(k))] = k;
      io.BackendPlatformName = "nbody --serve";
      keys_mapped_ = true;
    }
    for (auto& m : server_.take_inputs()) waiting_.push_back(std::move(m));
    render::Input in;
    bool changed_button[3] = {false, false, false};
    std::vector<bool> changed_key(std::size_t(Key::count), false);
    bool changed_modifiers = false;
    std::size_t used = 0;
    for (; used < waiting_.size(); ++used) {
      ClientMessage const& m = waiting_[used];
      if (auto const* b = std::get_if<Button>(&m.event)) {
        if (changed_button[b->button] && !b->down) break;  // next frame
        changed_button[b->button] = true;
      }
      if (auto const* k = std::get_if<KeyEvent>(&m.event)) {
        if (changed_key[std::size_t(k->key)] && !k->down) break;
        changed_key[std::size_t(k->key)] = true;
      }
      // Ctrl let go within the frame that clicked with it (or a second change of the modifiers): the frame sees the
      // click with Ctrl held, the next without.
      if (std::holds_alternative<Modifiers>(m.event)) {
        bool const pressed = changed_button[0] || changed_button[1] || changed_button[2] ||
                              std::find(changed_key.begin(), changed_key.end(), true) != changed_key.end();
        if (changed_modifiers || pressed) break;
        changed_modifiers = true;
      }
      apply(m, io, in);
      // The steering viewer's own count (a new one counts from 1 again).
      last_input_ = std::holds_alternative<ControlChanged>(m.event) ? 0 : m.id;
    }
    waiting_.erase(waiting_.begin(), waiting_.begin() + std::ptrdiff_t(used));
    // The viewer draws on demand: any message is input to show, and a viewer who came or went may
    // need a frame (one who just connected has only the last one sent).
    std::size_t const viewers = server_.viewers();
    in.events = used > 0 || viewers != viewers_seen_;
    viewers_seen_ = viewers;
    return in;
  }

  void wait_events(double seconds) override {
    if (!waiting_.empty()) return;  // input deferred to this frame
    server_.wait_input(std::min(seconds, 0.05));
  }

  // The frame is drawn (finish_frame waited for it): read back for the encoder, unless nobody watches.
  void present() override {
    if (server_.viewers() == 0) return;
    std::unique_ptr<RawFrame> frame = encoder_.spare();
    frame->rgba.resize(std::size_t(width_) * std::size_t(height_) * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, frame->rgba.data());
    FrameHeader& h = frame->header;
    h.sequence = ++sequence_;
    h.last_input = last_input_;
    h.rendered_us = std::uint64_t(1e6 * std::chrono::duration<double>(Clock::now() - origin_).count());
    h.step = stats_.step;
    h.bodies = stats_.bodies;
    h.time = stats_.time;
    h.steps_per_s = stats_.steps_per_s;
    h.width = std::uint32_t(width_);
    h.height = std::uint32_t(height_);
    h.flags = stats_.paused ? 1u : 0u;
    encoder_.put(std::move(frame));
  }

  bool watched() const override { return server_.viewers() > 0; }
  void set_vsync(bool) override {}
  bool set_fullscreen(bool) override { return false; }
  std::string describe() const override { return "frames to browsers, " + offscreen_->describe(); }
  // The keys' screenshots and checkpoints are written here, on the server: the browsers get them as downloads.
  void offer_file(const std::string& path) override { server_.offer_file(path); }

  void show(const LiveStats& stats) {
    stats_.step = stats.step;
    stats_.bodies = stats.bodies;
    stats_.time = stats.time;
    stats_.steps_per_s = stats.steps_per_s;
    stats_.paused = stats.paused;
  }

 private:
  static ImGuiKey imgui_key(Key k) {
    switch (k) {
      case Key::tab: return ImGuiKey_Tab;
      case Key::left: return ImGuiKey_LeftArrow;
      case Key::right: return ImGuiKey_RightArrow;
      case Key::up: return ImGuiKey_UpArrow;
      case Key::down: return ImGuiKey_DownArrow;
      case Key::page_up: return ImGuiKey_PageUp;
      case Key::page_down: return ImGuiKey_PageDown;
      case Key::home: return ImGuiKey_Home;
      case Key::end: return ImGuiKey_End;
      case Key::insert: return ImGuiKey_Insert;
      case Key::del: return ImGuiKey_Delete;
      case Key::backspace: return ImGuiKey_Backspace;
      case Key::space: return ImGuiKey_Space;
      case Key::enter: return ImGuiKey_Enter;
      case Key::escape: return ImGuiKey_Escape;
      case Key::a: return ImGuiKey_A;
      case Key::c: return ImGuiKey_C;
      case Key::v: return ImGuiKey_V;
      case Key::x: return ImGuiKey_X;
      case Key::y: return ImGuiKey_Y;
      case Key::z: return ImGuiKey_Z;
      case Key::count: break;
    }
    return ImGuiKey_COUNT;
  }

  void apply(const ClientMessage& m, ImGuiIO& io, render::Input& in) {
    std::visit(
        [&](auto const& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, PointerMove>) {
            move_to(e.x, e.y, in);
            io.MousePos = ImVec2(e.x, e.y);
          } else if constexpr (std::is_same_v<E, Button>) {
            move_to(e.x, e.y, in);
            io.MousePos = ImVec2(e.x, e.y);
            io.MouseDown[e.button] = e.down;
            if (e.button == 0) left_ = e.down;
            else pan_[e.button - 1] = e.down;
          } else if constexpr (std::is_same_v<E, Wheel>) {
            io.MouseWheel += e.dy;
            in.scroll += e.dy;
          } else if constexpr (std::is_same_v<E, KeyEvent>) {
            io.KeysDown[int(e.key)] = e.down;
            hold_modifiers(e.modifiers, io);
            // Escape closes a pop-up or cancels an edit (ImGui has it); it never ends the server,
            // which other viewers may be watching.
          } else if constexpr (std::is_same_v<E, Modifiers>) {
            hold_modifiers(e.held, io);
          } else if constexpr (std::is_same_v<E, Character>) {
            io.AddInputCharacter(e.codepoint);
            // The viewer's keys, as typed; 'q' would quit, which is the server's to decide.
            if (e.codepoint < 128 && e.codepoint != 'q') in.keys += char(e.codepoint);
          } else if constexpr (std::is_same_v<E, FrameSize>) {
            width_ = e.width;
            height_ = e.height;
          } else if constexpr (std::is_same_v<E, ControlChanged>) {
            for (bool& down : io.MouseDown) down = false;
            for (bool& down : io.KeysDown) down = false;
            io.KeyCtrl = io.KeyShift = io.KeyAlt = io.KeySuper = false;
            left_ = pan_[0] = pan_[1] = false;
          }
        },
        m.event);
  }

  static void hold_modifiers(int held, ImGuiIO& io) {
    io.KeyCtrl = held & 1;
    io.KeyShift = held & 2;
    io.KeyAlt = held & 4;
    io.KeySuper = held & 8;
  }

  // Drags add up motion event by event, as in the window.
  void move_to(float x, float y, render::Input& in) {
    if (left_) in.orbit_dx += x - x_, in.orbit_dy += y - y_;
    if (pan_[0] || pan_[1]) in.pan_dx += x - x_, in.pan_dy += y - y_;
    x_ = x;
    y_ = y;
  }

  struct Shown {
    std::uint64_t step = 0;
    std::size_t bodies = 0;
    double time = 0, steps_per_s = 0;
    bool paused = false;
  };

  std::unique_ptr<render::Surface> offscreen_;  // the GL context; first, so it outlives the rest
  WebServer& server_;
  Clock::time_point origin_;
  Encoder encoder_;
  int width_, height_;
  std::vector<ClientMessage> waiting_;
  std::uint64_t last_input_ = 0, sequence_ = 0;
  std::size_t viewers_seen_ = 0;
  float x_ = 0, y_ = 0;
  bool left_ = false, pan_[2] = {false, false}, keys_mapped_ = false;
  Shown stats_;
};

// The addresses of this machine's interfaces that are up with a link and not the loopback (with `ipv4`, IPv4; with
// `ipv6`, global IPv6: a link-local one needs its interface named), at most three of each family, for the URLs of a
// server bound to every interface.
std::vector<std::string> machine_addresses(bool ipv4, bool ipv6) {
  std::vector<std::string> found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  int of_family[2] = {0, 0};
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    unsigned const up = IFF_UP | IFF_RUNNING;  // a bridge with nothing on it (docker0) is up, not running
    if (!a->ifa_addr || (a->ifa_flags & up) != up || (a->ifa_flags & IFF_LOOPBACK)) continue;
    int const family = a->ifa_addr->sa_family == AF_INET6 ? 1 : 0;
    if (of_family[family] == 3) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (ipv4 && a->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    } else if (ipv6 && a->ifa_addr->sa_family == AF_INET6) {
      in6_addr const& v6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(&v6)) continue;
      inet_ntop(AF_INET6, &v6, text, sizeof text);
    } else {
      continue;
    }
    if (text[0] && std::find(found.begin(), found.end(), text) == found.end()) found.emplace_back(text), ++of_family[family];
  }
  freeifaddrs(list);
  return found;
}

std::string page() { return std::string(reinterpret_cast<const char*>(kServePage), kServePageSize); }

}  // namespace


int run_serve(const Options& options) {
  // Bad input is refused before the address is given (the bodies are made once the session runs).
  agree(world(), [&] { driver::check_setup(options.run); });
  if (world().rank() != 0) return run_viewer_session(options, nullptr, {});  // follows rank 0
  // --interop on where no GPU runs it is refused at once, before an address is given that would never serve.
  check_interop_on(options);
  ListenAddress const address = serve::parse_listen_address(options.serve);
  auto log = [quiet = options.quiet](const std::string& line) {
    if (!quiet) std::cerr << line << "\n";
  };
  // A token unless the server listens on the loopback only (the server decides once bound).
  std::string const token = random_token();
  auto server = std::make_unique<WebServer>(address, token, page(), log);
  // Bound to every interface (0.0.0.0, ::, or "0" as inet_aton reads it): the URL names this machine, which
  // another can open (0.0.0.0 it cannot).
  std::string shown = address.host;
  if (char name[256] = {}; server->every_interface() && gethostname(name, sizeof name - 1) == 0 && name[0])
    shown = name;
  std::string const host = shown.find(':') != std::string::npos ? "[" + shown + "]" : shown;
  std::string url = "http://" + host + ":" + std::to_string(server->port()) + "/";
  if (!server->loopback()) url += "?token=" + token;
  std::string const port = std::to_string(server->port());
  // The machine's own addresses too, which another machine can open where the name does not resolve there.
  std::string addresses;
  if (server->every_interface())
    for (std::string const& a : machine_addresses(server->ipv4(), address.host.find(':') != std::string::npos))
      addresses += (addresses.empty() ? "" : ", ") +
                   ("http://" + (a.find(':') != std::string::npos ? "[" + a + "]" : a) + ":" + port + "/?token=" + token);
  std::string how = "anyone who can reach this host and has the token can steer";
  if (server->loopback())
    how = "this machine only; from another: ssh -L " + port + ":" + host + ":" + port + " HOST";
  else if (shown != address.host)  // the machine's name may not resolve everywhere: its loopback URL too
    how = "or http://" + std::string(server->ipv4() ? "127.0.0.1" : "[::1]") + ":" + port + "/?token=" + token +
          " on this machine; " + how;
  // The frames' EGL surface before the URL: a server that cannot draw (no EGL driver) fails before anyone is told
  // where to connect.
  auto surface = std::make_unique<BrowserSurface>(*server, options.width, options.height);
  // The URL on stderr always (--quiet too): without it nobody can connect.
  std::cerr << "serve: open " << url << "  (" << how << ")\n";
  if (!addresses.empty()) std::cerr << "serve: or by this machine's address: " << addresses << "\n";
  BrowserSurface* frames = surface.get();
  // The pages are told why the server stops (a WebSocket close they show), before its connections end.
  int code = 0;
  try {
    code = run_viewer_session(options, std::move(surface), [frames](const LiveStats& s) { frames->show(s); });
  } catch (const Interrupted& e) {
    server->stop(std::string("the server stopped: ") + e.what());
    throw;
  } catch (const std::exception& e) {
    server->stop(std::string("the server stopped on an error: ") + e.what());
    throw;
  }
  int const sig = interrupt_signal();
  server->stop(sig ? std::string("the server stopped: ") + Interrupted::what_came(sig) : "the server stopped");
  auto counted = [](std::uint64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  std::uint64_t const unlogged = server->unlogged_refusals();
  log("serve: " + counted(server->refused_requests(), "request") + " and " +
      counted(server->refused_messages(), "message") + " refused" +
      (unlogged ? " (" + std::to_string(unlogged) + " of them not logged)" : ""));
  return code;
}

}  // namespace nbody::app

#else  // without the viewer, Boost.Beast or libturbojpeg

#include "core/errors.h"

namespace nbody::app {
int run_serve(const Options&) {
  throw InputError("--serve: this nbody was built without the browser viewer (it needs the viewer's libraries, "
                   "Boost.Beast from libboost-dev and libturbojpeg0-dev); install them (scripts/install-deps.sh) "
                   "and rebuild");
}
}  // namespace nbody::app

#endif
