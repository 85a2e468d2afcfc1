// app/web_server.h - the HTTP and WebSocket server of `nbody --serve` (Boost.Beast, one network
// thread): the page at "/", frames to every viewer over "/ws", input from the one that steers, and
// the files the viewers' keys wrote at "/files/NAME". The
// render loop never waits for it: publish() hands a frame over and returns, each viewer is sent only
// the newest frame it has not had (a slow one gets fewer), and a viewer that stops reading is closed
// by its idle timeout while the others go on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/serve_protocol.h"

namespace nbody::app::serve {

// One encoded frame, header and JPEG, shared by every viewer it goes to.
using FrameBytes = std::shared_ptr<const std::vector<std::uint8_t>>;

class WebServer {
 public:
  // Binds `address` (InputError naming it when it cannot: unknown host, port taken, no permission)
  // and serves from a thread of its own. `token`: required on every request unless the address is a
  // loopback one (then only this machine's users reach it).
  WebServer(const ListenAddress& address, std::string token, std::string page,
            std::function<void(const std::string&)> log);
  ~WebServer();  // stop("the server stopped")
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  std::uint16_t port() const { return port_; }     // the one bound (port 0 asks for a free one)
  bool loopback() const { return loopback_; }      // bound to a loopback address only
  bool every_interface() const { return every_interface_; }  // bound to 0.0.0.0 or :: (however written)
  bool ipv4() const { return ipv4_; }  // reached over IPv4 (bound to an IPv4 address, or to :: not IPv6 only)
  std::string bound_host() const { return bound_host_; }

  // The newest frame for every viewer; returns at once.
  void publish(FrameBytes frame);
  // Input from the viewer that steers, in arrival order (at most kMaxPendingInputs wait).
  std::vector<ClientMessage> take_inputs();
  // Waits up to `seconds` for input (or stop()): the render loop sleeps here between frames.
  void wait_input(double seconds);
  std::size_t viewers() const { return viewers_.load(); }
  // How long after the server's start a page that steered before it started takes control back (its pages come back
  // within the page's reconnect back-off, 30 s at most); later, its claim is a stale one (the default: 60 s). Before
  // the first viewer connects.
  void set_claim_window(std::chrono::milliseconds window);
  // A file written on this machine at a viewer's request (the 'p' key's screenshot, the 's' key's checkpoint): every
  // viewer is told its name ("file NAME") and may download it from /files/NAME while the server runs (the newest
  // kMaxFilesOffered; the file is read when asked for). Returns at once.
  void offer_file(const std::string& path);

  // Tells every viewer that the server stops, with `reason` (a WebSocket close, 1001 "going away"; its first 123
  // bytes), waits up to a second for their answers, closes every connection and joins the network thread. Once; the
  // destructor calls it too.
  void stop(const std::string& reason);

  // How many refusals are logged in a window of time (20 a minute): more are counted, and said as a count.
  void bound_refusal_log(std::uint64_t lines, std::chrono::steady_clock::duration window);

  // Counters, for the log and tests.
  std::uint64_t refused_requests() const { return refused_requests_.load(); }
  std::uint64_t refused_messages() const { return refused_messages_.load(); }
  // Of those, the ones counted past the log's bound and not logged.
  std::uint64_t unlogged_refusals() const { return unlogged_refusals_.load(); }

  struct Impl;  // the network side (web_server.cpp)

 private:
  friend struct Impl;
  void deliver(ClientMessage message);  // from the network thread
  void note(const std::string& text);   // a log line, rate-bounded for refusals

  std::function<void(const std::string&)> log_;
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
  bool loopback_ = true;
  bool every_interface_ = false;
  bool ipv4_ = true;
  std::string bound_host_;
  std::atomic<std::size_t> viewers_{0};
  std::atomic<std::uint64_t> refused_requests_{0}, refused_messages_{0}, unlogged_refusals_{0};
  // note()'s bound on refusals logged: this minute's window, its lines logged and its refusals counted past them.
  std::mutex refusal_log_mutex_;
  std::chrono::steady_clock::time_point refusal_window_start_{};
  std::chrono::steady_clock::duration refusal_window_ = std::chrono::seconds(60);
  std::uint64_t refusal_lines_ = 20, refusals_logged_ = 0, refusals_unlogged_ = 0;
  std::mutex input_mutex_;
  std::condition_variable input_arrived_;
  std::deque<ClientMessage> inputs_;
  std::uint64_t inputs_dropped_ = 0;
  std::thread thread_;  // last: joined before the rest goes
};

}  // namespace nbody::app::serve
