// app/serve_protocol.h - what `nbody --serve` and its page say to each other, without the network:
// the listen address, the access token, the browser's input messages (parsed as hostile: bounded,
// every field checked), the frame header, and the one-slot mailbox that hands on only the latest
// frame. Kept apart from the server so each rule is tested on its own (tests/test_serve.cpp).
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nbody::app::serve {

// Bounds on what a browser may send or ask for.
inline constexpr std::size_t kMaxMessageBytes = 256;     // one input message ("p 123456 1919 1079" is 18)
inline constexpr int kMaxFrameWidth = 3840, kMaxFrameHeight = 2160;  // frames sized to the browser, up to 4K
inline constexpr int kMinFrameSide = 16;                 // as --width and --height
inline constexpr std::size_t kMaxClients = 16;           // connections at once; more are refused
inline constexpr std::size_t kMaxPendingInputs = 1024;   // input events waiting for the next frame
inline constexpr std::size_t kMaxFilesOffered = 100;     // the newest files the keys wrote, for download
inline constexpr std::size_t kMaxDownloads = 8;          // downloads sent at once (each holds a file open); more wait
// Frames sent to one viewer and not yet acknowledged: 3 keep 30 frames/s over a 100 ms round trip
// while bounding how stale a frame on a slow link can be.
inline constexpr std::size_t kMaxFramesInFlight = 3;

// --serve [HOST:]PORT. A port alone binds the loopback interface; IPv6 hosts in brackets
// ("[::1]:8080"). Port 0 asks the system for a free one (printed at start).
struct ListenAddress {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};
// Throws InputError naming the value and what is allowed.
ListenAddress parse_listen_address(const std::string& text);

// 128 random bits from the system's generator, as 32 hex digits.
std::string random_token();
// Compares in a time that depends on the lengths only, not on where the first difference is.
bool tokens_equal(std::string_view given, std::string_view expected);
// The value of `name` in a request target's query ("/ws?token=abc" -> "abc"), or nothing.
std::optional<std::string> query_value(std::string_view target, std::string_view name);
// The path of a request target, without its query.
std::string_view target_path(std::string_view target);
// A page's tab id as the page makes it: 8 to 64 letters, digits and '-' (a random UUID).
bool tab_id(std::string_view text);
// A text for the pages' eyes: the paths it names in `folders` (the folder the keys write to, the input's, the
// server's working and home folders) without those folders ("saved /home/ann/Pictures/nbody-1.h5" -> "saved
// nbody-1.h5"), and a folder named alone by its last part: the watchers need not see the server's user and folders.
// Each folder is matched as given and as an absolute path, spaces and all; other text is left as it is. The
// server's own log keeps the whole text.
std::string without_folders(std::string_view text, std::vector<std::string> folders);

// The browser's messages, one per WebSocket text message: a letter, the event's id (a number the page
// counts up, so frames can say which input they show), then the event's fields, separated by spaces.
//   p ID X Y              pointer moved to (X, Y), frame pixels
//   d ID BUTTON X Y       button pressed (0 left, 1 right, 2 middle)
//   u ID BUTTON X Y       button released
//   w ID DY               wheel, in steps (positive: away from the user, zooms in)
//   k ID DOWN KEY MODS    a named key (kKeyNames) down (1) or up (0); MODS: 1 ctrl, 2 shift, 4 alt, 8 super
//   m ID MODS             the modifier keys held changed (MODS as for k): before a click (Ctrl+click
//                         types into a slider) and when one is let go (after Ctrl+A, typing goes on)
//   c ID CODEPOINT        a character typed
//   s ID WIDTH HEIGHT     the page's size for frames, pixels
//   t ID                  take control (this viewer steers from now on)
//   a SEQUENCE            frame SEQUENCE arrived (and those before it): the server keeps at most
//                         kMaxFramesInFlight frames unacknowledged per viewer, so frames never wait
//                         in socket buffers, and what a viewer sees is at most that many frames old
enum class Key : std::uint8_t {
  tab, left, right, up, down, page_up, page_down, home, end, insert, del, backspace, space, enter, escape,
  a, c, v, x, y, z, count
};
inline constexpr std::array<const char*, std::size_t(Key::count)> kKeyNames{
    "Tab", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", "Insert",
    "Delete", "Backspace", "Space", "Enter", "Escape", "a", "c", "v", "x", "y", "z"};

struct PointerMove { float x, y; };
struct Button { int button; bool down; float x, y; };
struct Wheel { float dy; };
struct KeyEvent { Key key; bool down; int modifiers; };
struct Modifiers { int held; };  // as KeyEvent::modifiers
struct Character { std::uint32_t codepoint; };
struct FrameSize { int width, height; };
struct TakeControl {};
struct Acknowledge {};  // the frame's sequence number is the message's id
// Not from the wire: the server's note that another viewer steers now (or none), so buttons and keys
// the last one held are released, not left down for the next.
struct ControlChanged {};
using Event =
    std::variant<PointerMove, Button, Wheel, KeyEvent, Modifiers, Character, FrameSize, TakeControl, Acknowledge,
                 ControlChanged>;

struct ClientMessage {
  std::uint64_t id = 0;
  Event event;
};

// The message, or the reason it is refused (for the log): bad letter, wrong field count, a number
// that is not one or is out of range, too long.
struct ParseResult {
  std::optional<ClientMessage> message;
  std::string error;
};
ParseResult parse_client_message(std::string_view text);

// A frame's header, little-endian, before the JPEG bytes in one binary WebSocket message.
struct FrameHeader {
  std::uint64_t sequence = 0;       // counts frames from 1
  std::uint64_t last_input = 0;     // id of the newest input event this frame reflects (0: none)
  std::uint64_t rendered_us = 0;    // server clock (microseconds since start): frame drawn and read back
  std::uint64_t encoded_us = 0;     // JPEG ready
  std::uint64_t step = 0;           // the simulation's step count shown
  std::uint64_t bodies = 0;         // N shown
  double time = 0;                  // simulation time shown
  double steps_per_s = 0;           // the simulation's recent rate
  std::uint32_t width = 0, height = 0;
  std::uint32_t flags = 0;          // 1: paused
};
inline constexpr char kFrameMagic[4] = {'N', 'B', 'F', '1'};
inline constexpr std::size_t kFrameHeaderBytes = 4 + 8 * 8 + 4 * 3;
void write_frame_header(const FrameHeader& header, std::uint8_t* out);  // kFrameHeaderBytes
std::optional<FrameHeader> read_frame_header(const std::uint8_t* data, std::size_t size);

// One slot holding the newest value: put() replaces what a slow taker has not taken (dropped, never
// queued), take() waits a bounded time for a value newer than the last one it took.
template <class T>
class LatestSlot {
 public:
  // Returns true when it replaced a value nobody took (a dropped one).
  bool put(T value) {
    std::lock_guard<std::mutex> lock(mutex_);
    bool const dropped = full_;
    value_ = std::move(value);
    full_ = true;
    if (dropped) ++drops_;
    changed_.notify_one();
    return dropped;
  }
  // The value, or nothing after `seconds` or close().
  template <class Rep, class Period>
  std::optional<T> take(std::chrono::duration<Rep, Period> wait) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, wait, [&] { return full_ || closed_; });
    if (!full_) return std::nullopt;
    full_ = false;
    return std::move(value_);
  }
  std::optional<T> try_take() { return take(std::chrono::seconds(0)); }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  std::uint64_t drops() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return drops_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  T value_{};
  bool full_ = false, closed_ = false;
  std::uint64_t drops_ = 0;
};

}  // namespace nbody::app::serve
