// tests/test_serve.cpp - the rules of `nbody --serve` that need no network: the listen address, the
// token, the browser's messages (good, bad, oversized and random ones), the frame header and the
// one-slot mailbox that drops old frames instead of queueing them.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <chrono>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/serve_protocol.h"
#include "core/errors.h"
#ifdef NBODY_HAVE_SERVE
#include <arpa/inet.h>

#include <mutex>

#include "app/web_server.h"
#endif

namespace nbody::app::serve {
namespace {

TEST(ServeAddress, PortAloneIsLoopback) {
  ListenAddress const a = parse_listen_address("8080");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8080);
  EXPECT_EQ(parse_listen_address("0").port, 0);  // any free port
}

TEST(ServeAddress, HostAndPort) {
  EXPECT_EQ(parse_listen_address("0.0.0.0:9000").host, "0.0.0.0");
  EXPECT_EQ(parse_listen_address("0.0.0.0:9000").port, 9000);
  EXPECT_EQ(parse_listen_address("localhost:65535").port, 65535);
  EXPECT_EQ(parse_listen_address("[::1]:8080").host, "::1");
  EXPECT_EQ(parse_listen_address("gpu-node-3.cluster:8080").host, "gpu-node-3.cluster");
}

TEST(ServeAddress, BadOnesAreRefusedNamingTheValue) {
  for (std::string bad : std::initializer_list<std::string>{"", "http", "65536", "-1", "8080x", ":8080", "::1:8080", "[::1]8080", "[::1", "a b:80",
                          "1.2.3.4:", "host:99999", "h/st:80", "host:0x50", std::string(300, 'a') + ":80"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << "accepted --serve '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--serve " + (bad.empty() ? "''" : bad) + ":"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("[HOST:]PORT"), std::string::npos) << e.what();
    }
  }
  // An IPv4 or named host with more than a port after it is not called a misspelt IPv6 host; a bare IPv6 address is.
  for (auto const& [bad, why] : std::initializer_list<std::pair<std::string, std::string>>{
           {"127.0.0.1:8080:1", "more than one ':' after the host 127.0.0.1; HOST:PORT has one"},
           {"node7:8080:1", "more than one ':' after the host node7; HOST:PORT has one"},
           {"::1:8080", "an IPv6 host is written in brackets, [HOST]:PORT"},
           {"fe80::1:8080", "an IPv6 host is written in brackets, [HOST]:PORT"}}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << "accepted --serve '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--serve " + bad + ": " + why + "; give [HOST:]PORT", 0), 0u) << e.what();
    }
  }
  // A URL pasted for the address is named as one, not as a misspelt IPv6 host.
  try {
    parse_listen_address("http://127.0.0.1:8080/");
    ADD_FAILURE() << "accepted a URL";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--serve http://127.0.0.1:8080/: that is a URL; give the address to listen "
                                          "on, not one to open; give [HOST:]PORT", 0),
              0u)
        << e.what();
  }
}

TEST(ServeToken, HasOneHundredTwentyEightRandomBits) {
  std::string const a = random_token(), b = random_token();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

TEST(ServeToken, EqualOnlyWhenEveryCharacterIs) {
  std::string const t = "0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(tokens_equal(t, t));
  std::string first = t, last = t;
  first[0] = 'x';
  last[31] = 'x';
  EXPECT_FALSE(tokens_equal(first, t));
  EXPECT_FALSE(tokens_equal(last, t));
  EXPECT_FALSE(tokens_equal(t.substr(0, 31), t));  // a prefix
  EXPECT_FALSE(tokens_equal(t + "0", t));           // longer
  EXPECT_FALSE(tokens_equal("", t));
  EXPECT_FALSE(tokens_equal("", ""));  // no token expected is never "equal": the caller checks whether one is set
}

TEST(ServeToken, FoundInTheQuery) {
  EXPECT_EQ(query_value("/ws?token=abc", "token"), "abc");
  EXPECT_EQ(query_value("/?a=1&token=x&b=2", "token"), "x");
  EXPECT_EQ(query_value("/?token=", "token"), "");
  EXPECT_FALSE(query_value("/ws", "token"));
  EXPECT_FALSE(query_value("/?tokenx=1&xtoken=2", "token"));
  EXPECT_EQ(target_path("/ws?token=abc"), "/ws");
  EXPECT_EQ(target_path("/"), "/");
}

template <class E>
E event_of(const std::string& text) {
  ParseResult const r = parse_client_message(text);
  EXPECT_TRUE(r.message) << text << ": " << r.error;
  if (!r.message) return E{};
  EXPECT_TRUE(std::holds_alternative<E>(r.message->event)) << text;
  return std::holds_alternative<E>(r.message->event) ? std::get<E>(r.message->event) : E{};
}

TEST(ServeMessages, EveryKindParses) {
  EXPECT_EQ(parse_client_message("p 17 120.5 -3").message->id, 17u);
  auto const p = event_of<PointerMove>("p 17 120.5 -3");
  EXPECT_FLOAT_EQ(p.x, 120.5f);
  EXPECT_FLOAT_EQ(p.y, -3.0f);
  auto const d = event_of<Button>("d 18 2 10 20");
  EXPECT_EQ(d.button, 2);
  EXPECT_TRUE(d.down);
  EXPECT_FALSE(event_of<Button>("u 19 0 10 20").down);
  EXPECT_FLOAT_EQ(event_of<Wheel>("w 20 -1.25").dy, -1.25f);
  auto const k = event_of<KeyEvent>("k 21 1 Enter 3");
  EXPECT_EQ(k.key, Key::enter);
  EXPECT_TRUE(k.down);
  EXPECT_EQ(k.modifiers, 3);
  EXPECT_EQ(event_of<KeyEvent>("k 22 0 Escape 0").key, Key::escape);
  EXPECT_EQ(event_of<Modifiers>("m 27 1").held, 1);  // Ctrl pressed alone (before a click)
  EXPECT_EQ(event_of<Modifiers>("m 28 0").held, 0);  // and let go
  EXPECT_EQ(event_of<Character>("c 23 32").codepoint, 32u);
  EXPECT_EQ(event_of<Character>("c 24 1046").codepoint, 1046u);  // a Cyrillic letter
  auto const s = event_of<FrameSize>("s 25 1280 720");
  EXPECT_EQ(s.width, 1280);
  EXPECT_EQ(s.height, 720);
  event_of<TakeControl>("t 26");
  event_of<Acknowledge>("a 12345");
  EXPECT_EQ(parse_client_message("a 12345").message->id, 12345u);
  EXPECT_EQ(parse_client_message("t 18446744073709551615").message->id, 18446744073709551615ull);
}

TEST(ServeMessages, BadOnesAreRefusedWithAReason) {
  for (std::string bad : std::initializer_list<std::string>
       {"", " ", "x 1", "pp 1 2 3", "p", "p 1 2", "p 1 2 3 4", "p 1  2", "p 1 2 3 ", " p 1 2 3", "p -1 2 3",
        "p 1.5 2 3", "p 18446744073709551616 2 3", "p x 2 3", "p 1 nan 3", "p 1 inf 3", "p 1 1e3 3", "p 1 0x10 3",
        "p 1 99999 3", "p 1 3 -99999", "p 1 1.2.3 4", "d 1 3 0 0", "d 1 -1 0 0", "d 1 left 0 0", "u 1 0 0",
        "w 1 101", "w 1 -", "k 1 2 Enter 0", "k 1 1 F13 0", "k 1 1 enter 0", "k 1 1 Enter 16", "k 1 1 Enter -1",
        "m 1", "m 1 16", "m 1 -1", "m 1 ctrl", "m 1 1 2",
        "c 1 0", "c 1 31", "c 1 127", "c 1 55296", "c 1 1114112", "c 1 a", "s 1 15 100", "s 1 100 15",
        "s 1 3841 100", "s 1 100 2161", "s 1 100000 100000", "s 1 -640 480", "t", "t 1 2", "t 1\n", "a", "a -1", "a 1 2", "a x",
        std::string("p 1 2\0 3", 8)}) {
    ParseResult const r = parse_client_message(bad);
    EXPECT_FALSE(r.message) << "accepted '" << bad << "'";
    EXPECT_FALSE(r.error.empty()) << "no reason for '" << bad << "'";
  }
}

TEST(ServeMessages, OversizedOnesAreRefusedBeforeParsing) {
  std::string const big = "p 1 " + std::string(kMaxMessageBytes, '1') + " 2";
  ParseResult const r = parse_client_message(big);
  EXPECT_FALSE(r.message);
  EXPECT_NE(r.error.find("at most " + std::to_string(kMaxMessageBytes)), std::string::npos) << r.error;
  EXPECT_FALSE(parse_client_message("p 1 0." + std::string(15, '1') + " 2").message);  // a number over 16 characters
}

// Random bytes and mutations of good messages: each is parsed or refused with a reason, never more.
TEST(ServeMessages, RandomInputIsParsedOrRefused) {
  std::mt19937 rng(42);
  std::string const seeds[] = {"p 17 120.5 -3", "d 18 2 10 20", "w 20 -1.25", "k 21 1 Enter 3", "c 23 32",
                               "s 25 1280 720", "t 26", "m 27 1"};
  int accepted = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string text;
    if (k % 2 == 0) {
      std::size_t const n = rng() % 300;
      for (std::size_t i = 0; i < n; ++i) text += char(rng() % 256);
    } else {
      text = seeds[rng() % 7];
      for (int m = 0, edits = 1 + int(rng() % 3); m < edits; ++m) text[rng() % text.size()] = char(32 + rng() % 95);
    }
    ParseResult const r = parse_client_message(text);
    ASSERT_NE(bool(r.message), !r.error.empty()) << text;
    accepted += bool(r.message);
  }
  EXPECT_GT(accepted, 0);  // the mutations keep some messages valid: the parser is not refusing everything
}

TEST(ServeFrames, HeaderRoundTrips) {
  FrameHeader h;
  h.sequence = 12345678901234ull;
  h.last_input = 77;
  h.rendered_us = 1'000'001;
  h.encoded_us = 1'004'002;
  h.step = 999;
  h.bodies = 1048576;
  h.time = 3.25;
  h.steps_per_s = 2.5e3;
  h.width = 1280;
  h.height = 720;
  h.flags = 1;
  std::uint8_t bytes[kFrameHeaderBytes + 3] = {};
  write_frame_header(h, bytes);
  auto const back = read_frame_header(bytes, sizeof bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->sequence, h.sequence);
  EXPECT_EQ(back->last_input, h.last_input);
  EXPECT_EQ(back->encoded_us, h.encoded_us);
  EXPECT_EQ(back->bodies, h.bodies);
  EXPECT_EQ(back->time, h.time);
  EXPECT_EQ(back->steps_per_s, h.steps_per_s);
  EXPECT_EQ(back->width, 1280u);
  EXPECT_EQ(back->height, 720u);
  EXPECT_EQ(back->flags, 1u);
  EXPECT_EQ(kFrameHeaderBytes, 80u);  // web/viewer.html and tools/serve_bench.py read 80 bytes
  EXPECT_FALSE(read_frame_header(bytes, kFrameHeaderBytes - 1));
  bytes[0] = 'X';
  EXPECT_FALSE(read_frame_header(bytes, sizeof bytes));
}

TEST(ServeMailbox, KeepsOnlyTheNewest) {
  LatestSlot<int> slot;
  EXPECT_FALSE(slot.put(1));
  EXPECT_TRUE(slot.put(2));  // 1 was never taken: dropped
  EXPECT_TRUE(slot.put(3));
  EXPECT_EQ(slot.try_take(), 3);
  EXPECT_EQ(slot.drops(), 2u);
  EXPECT_FALSE(slot.try_take());  // taken once only
}

constexpr double kTakeWaitBound = 1.0;  // seconds a 50 ms wait may take on a loaded 2-core machine (measured ~0.05)

TEST(ServeMailbox, WaitsAreBoundedAndCloseWakesTheTaker) {
  LatestSlot<int> slot;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(slot.take(std::chrono::milliseconds(50)));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), kTakeWaitBound);
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    slot.close();
  });
  t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(slot.take(std::chrono::seconds(60)));  // close() ends the wait, not the 60 s
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), kTakeWaitBound);
  closer.join();
}

// A fast producer and a slow consumer: the consumer sees a rising subsequence ending at the last
// value, and the producer never waits for it.
TEST(ServeMailbox, SlowTakerGetsFewerNeverOld) {
  LatestSlot<int> slot;
  std::atomic<bool> done{false};
  std::vector<int> seen;
  std::thread taker([&] {
    for (;;) {
      auto v = slot.take(std::chrono::milliseconds(20));
      if (v) seen.push_back(*v);
      else if (done.load()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // slow, like a stalled viewer
    }
  });
  auto const t0 = std::chrono::steady_clock::now();
  for (int k = 1; k <= 2000; ++k) slot.put(k);
  double const put_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  done = true;
  taker.join();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 2000);
  for (std::size_t k = 1; k < seen.size(); ++k) EXPECT_LT(seen[k - 1], seen[k]);
  EXPECT_LT(seen.size(), 2000u);  // fewer: the rest were dropped
  EXPECT_LT(put_seconds, kTakeWaitBound);  // 2000 puts never waited for the 2 ms taker (measured ~1 ms)
}

// nbody itself: a bad --serve is one line naming the value, exit 2, before any work.
struct Outcome {
  int code = -1;
  std::string err;
};

Outcome nbody(const std::string& args, const std::string& environment = "") {
  auto const err = std::filesystem::temp_directory_path() / ("serve_cli_" + std::to_string(getpid()) + ".txt");
  std::string const cmd =
      environment + " " + std::string(NBODY_EXECUTABLE) + " " + args + " >/dev/null 2>" + err.string() + " </dev/null";
  int const status = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  o.err = text.str();
  std::filesystem::remove(err);
  return o;
}

TEST(ServeCli, BadAddressesAndOptionsAreOneLineExitTwo) {
  for (std::string const& args : {std::string("--serve 99999"), std::string("--serve ::1:80"), std::string("--serve ''"),
                                  std::string("--serve 8080 --offscreen"), std::string("--serve 8080 --video a.mp4"),
                                  std::string("--serve 8080 --viewer")}) {
    Outcome const o = nbody(args);
    EXPECT_EQ(o.code, 2) << args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << ": " << o.err;
    EXPECT_NE(o.err.find("--serve"), std::string::npos) << args << ": " << o.err;
  }
  EXPECT_NE(nbody("--serve 99999").err.find("--serve 99999: the port must be"), std::string::npos);
  // --serve is a viewer too (in a browser): what belongs to the window alone says so.
  EXPECT_NE(nbody("--serve 8080 --offscreen")
                .err.find("--offscreen does nothing with --serve; it belongs to the desktop viewer (a window, or "
                          "--offscreen's recordings), not the browser's"),
            std::string::npos);
}

// Settings that the bodies' start-up would refuse are refused before the address is given (and the viewer's, before
// its window opens): one line, exit 2.
TEST(ServeCli, BadSettingsAreRefusedBeforeTheAddressIsGiven) {
  std::string const missing = (std::filesystem::temp_directory_path() / "nbody-no-such-dir" / "x").string();
  std::vector<std::pair<std::string, std::string>> const cases{
      {"--integrator leapfrog --eta 0.1", "--eta: applies to --integrator hermite4 only"},
      {"--integrator hermite4 --dt 0.01", "--dt 0.01: hermite4 chooses each body's step"},
      {"--load " + missing + ".bin", "--load " + missing + ".bin: no such file"},
      {"--restart " + missing + ".h5", missing + ".h5"},
      {"--scenario two-body --bodies 2048", "--bodies 2048: the two-body scenario has exactly 2 bodies"}};
  for (const char* front : {"--serve 127.0.0.1:0", "--viewer"}) {
    for (auto const& [args, words] : cases) {
      Outcome const o = nbody(std::string(front) + " --backend cpu " + args);
      if (o.err.find("built without") != std::string::npos) GTEST_SKIP() << "this nbody has no " << front;
      EXPECT_EQ(o.code, 2) << front << " " << args << ": " << o.err;
      EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << front << " " << args << ": " << o.err;
      EXPECT_NE(o.err.find("error: "), std::string::npos) << front << " " << args << ": " << o.err;
      EXPECT_NE(o.err.find(words), std::string::npos) << front << " " << args << ": " << o.err;
    }
  }
}

TEST(ServeCli, PortInUseIsRefusedNamingIt) {
  int const fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), size), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size), 0);
  std::string const value = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  Outcome const o = nbody("--serve " + value + " --backend cpu --bodies 64");
  close(fd);
  if (o.err.find("built without") != std::string::npos) GTEST_SKIP() << "this nbody has no --serve";
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--serve " + value + ": cannot listen there"), std::string::npos) << o.err;
}

// A server that cannot draw (no EGL driver: GLVND told of none) fails before it gives an address nobody could use,
// naming --serve (not --offscreen, which it was not given) and saying in words what is missing.
TEST(ServeCli, NoEglDriverFailsBeforeTheAddressIsGiven) {
  Outcome const o = nbody("--serve 127.0.0.1:0 --backend cpu --bodies 64",
                          "timeout 60 env __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json");
  if (o.err.find("built without") != std::string::npos) GTEST_SKIP() << "this nbody has no --serve";
  if (o.err.find("EGL") == std::string::npos) GTEST_SKIP() << "this EGL is not GLVND's (it found a driver): " << o.err;
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(o.err.find("serve: open"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.rfind("error: --serve: no EGL driver could give a display to render into (", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("EGL rendering needs Mesa's EGL (Debian: libegl-mesa0) or the NVIDIA driver"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("--offscreen"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

#ifdef NBODY_HAVE_SERVE
// The server itself, with a WebSocket client of a few lines: frames from a thread of the test (as the
// encoder's), input from the viewer that steers only, every wait bounded. Under ThreadSanitizer
// (scripts/sanitize.sh thread) this is the check of the hand-overs between the threads.
// A socket to the server on the loopback, every read bounded; -1 where it did not connect (the socket closed).
int connect_loopback(std::uint16_t port) {
  int const fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
  close(fd);
  return -1;
}

class Client {
 public:
  Client(std::uint16_t port, const std::string& target) {
    fd_ = connect_loopback(port);
    if (fd_ < 0) return;
    write_all("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
              "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
              "Sec-WebSocket-Version: 13\r\n\r\n");
    while (buffer_.find("\r\n\r\n") == std::string::npos)
      if (!fill()) return;
    std::size_t const end = buffer_.find("\r\n\r\n") + 4;
    status_ = std::atoi(buffer_.c_str() + buffer_.find(' ') + 1);
    buffer_.erase(0, end);
  }
  ~Client() { close(fd_); }
  int status() const { return status_; }

  void send(const std::string& text) {  // one masked text frame (mask 0: the bytes as they are)
    std::string frame{char(0x81)};
    if (text.size() < 126) {
      frame += char(0x80 | text.size());
    } else {
      frame += char(0x80 | 126);
      frame += char(text.size() >> 8);
      frame += char(text.size() & 0xff);
    }
    frame += std::string(4, '\0') + text;
    write_all(frame);
  }

  // The next data message: (opcode, payload); nothing when the connection ends or a read times out.
  std::optional<std::pair<int, std::string>> receive() {
    for (;;) {
      if (!need(2)) return std::nullopt;
      int const opcode = buffer_[0] & 0x0f;
      std::size_t length = std::uint8_t(buffer_[1]) & 0x7f, head = 2;
      if (length == 126) {
        if (!need(4)) return std::nullopt;
        length = (std::size_t(std::uint8_t(buffer_[2])) << 8) | std::uint8_t(buffer_[3]);
        head = 4;
      } else if (length == 127) {
        if (!need(10)) return std::nullopt;
        length = 0;
        for (int k = 0; k < 8; ++k) length = (length << 8) | std::uint8_t(buffer_[std::size_t(2 + k)]);
        head = 10;
      }
      if (!need(head + length)) return std::nullopt;
      std::string payload = buffer_.substr(head, length);
      buffer_.erase(0, head + length);
      if (opcode == 8) {  // the server's close: its code and reason, kept
        if (payload.size() >= 2) close_code_ = (std::uint8_t(payload[0]) << 8) | std::uint8_t(payload[1]);
        close_reason_ = payload.size() > 2 ? payload.substr(2) : "";
        return std::nullopt;
      }
      if (opcode == 1 || opcode == 2) return std::pair{opcode, payload};
    }
  }
  // The close frame received (receive() returned nothing after it): its code, 0 where none came, and its reason.
  int close_code() const { return close_code_; }
  const std::string& close_reason() const { return close_reason_; }
  void answer_close() {  // the closing handshake's answer: a masked close frame with the code received
    write_all(std::string{char(0x88), char(0x82), 0, 0, 0, 0, char(close_code_ >> 8), char(close_code_ & 0xff)});
  }

 private:
  bool fill() {
    char chunk[65536];
    ssize_t const n = recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, std::size_t(n));
    return true;
  }
  bool need(std::size_t n) {
    while (buffer_.size() < n)
      if (!fill()) return false;
    return true;
  }
  void write_all(const std::string& bytes) {
    for (std::size_t sent = 0; sent < bytes.size();) {
      ssize_t const n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += std::size_t(n);
    }
  }
  int fd_ = -1, status_ = 0, close_code_ = 0;
  std::string buffer_, close_reason_;
};

FrameBytes frame_numbered(std::uint64_t sequence) {
  FrameHeader h;
  h.sequence = sequence;
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(kFrameHeaderBytes + 1000, std::uint8_t(sequence));
  write_frame_header(h, bytes->data());
  return bytes;
}

TEST(ServeServer, FramesReachEveryViewerAndInputComesFromTheSteeringOne) {
  std::mutex log_mutex;
  std::vector<std::string> log;
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mutex);
    log.push_back(line);
  });
  ASSERT_TRUE(server.loopback());
  Client first(server.port(), "/ws"), second(server.port(), "/ws");
  ASSERT_EQ(first.status(), 101);
  ASSERT_EQ(second.status(), 101);
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.viewers() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(server.viewers(), 2u);

  // Frames from another thread, faster than anyone reads: each viewer sees a rising series.
  std::thread encoder([&] {
    for (std::uint64_t k = 1; k <= 300; ++k) server.publish(frame_numbered(k));
  });
  auto frames_seen = [](Client& c, std::uint64_t until) {
    std::vector<std::uint64_t> seen;
    while (seen.empty() || seen.back() < until) {
      auto const m = c.receive();
      if (!m) break;
      if (m->first != 2) continue;
      auto const h = read_frame_header(reinterpret_cast<const std::uint8_t*>(m->second.data()), m->second.size());
      if (!h) break;
      seen.push_back(h->sequence);
      c.send("a " + std::to_string(h->sequence));
    }
    return seen;
  };
  auto const a = frames_seen(first, 300);
  encoder.join();
  auto const b = frames_seen(second, 300);
  for (auto const* seen : {&a, &b}) {
    ASSERT_FALSE(seen->empty());
    EXPECT_EQ(seen->back(), 300u);  // the newest always arrives
    for (std::size_t k = 1; k < seen->size(); ++k) EXPECT_LT((*seen)[k - 1], (*seen)[k]);
  }
  EXPECT_LT(b.size(), 300u);  // the second read nothing while 300 were published: it got a few, not all

  // Input: the first viewer steers; the second's is not taken; bad messages are counted.
  second.send("p 9 1 1");
  first.send("p 5 10 20");
  first.send("p 6 nan 20");
  // The next inputs from a viewer (the server's own ControlChanged notes aside), waiting up to 10 s.
  auto viewer_inputs = [&] {
    std::vector<ClientMessage> inputs;
    auto const end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (inputs.empty() && std::chrono::steady_clock::now() < end) {
      server.wait_input(0.05);
      for (auto& m : server.take_inputs())
        if (!std::holds_alternative<ControlChanged>(m.event)) inputs.push_back(m);
    }
    return inputs;
  };
  auto inputs = viewer_inputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].id, 5u);
  while (server.refused_messages() < 1 && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server.refused_messages(), 1u);

  // The second takes control: its input counts from now on.
  second.send("t 1");
  second.send("w 10 1.5");
  inputs = viewer_inputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].id, 10u);
}

// The steering page reloaded (gone, then back as a new viewer) steers again: control went at once to a page still
// there (a student's), and the frames to its size. Where none comes back, a page still there steers after a few
// seconds.
// Whether the server has `n` viewers within 10 s.
bool viewers_reach(const WebServer& server, std::size_t n) {
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.viewers() != n && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return server.viewers() == n;
}

// The next input ids from viewers (the server's own ControlChanged notes aside), waiting `seconds`.
std::vector<std::uint64_t> input_ids_within(WebServer& server, double seconds) {
  std::vector<std::uint64_t> ids;
  auto const end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    server.wait_input(0.05);
    for (auto& m : server.take_inputs())
      if (!std::holds_alternative<ControlChanged>(m.event)) ids.push_back(m.id);
  }
  return ids;
}

// Whether a server bound to every interface is reached over IPv4, for the URLs it gives: bound to ::, only where the
// socket is not IPv6 only (the host's net.ipv6.bindv6only is its default). It listed IPv4 URLs where they could not
// reach it.
TEST(ServeServer, ItKnowsWhetherIPv4ReachesIt) {
  WebServer v4({"0.0.0.0", 0}, "t", "<p>page</p>", nullptr);
  EXPECT_TRUE(v4.every_interface());
  EXPECT_TRUE(v4.ipv4());
  std::unique_ptr<WebServer> v6;
  try {
    v6 = std::make_unique<WebServer>(ListenAddress{"::", 0}, "t", "<p>page</p>", nullptr);
  } catch (const InputError& e) {
    GTEST_SKIP() << "no IPv6 here: " << e.what();
  }
  int v6only = 0;
  std::ifstream("/proc/sys/net/ipv6/bindv6only") >> v6only;
  EXPECT_TRUE(v6->every_interface());
  EXPECT_EQ(v6->ipv4(), v6only == 0) << "net.ipv6.bindv6only is " << v6only;
  if (v6only == 0) {  // then an IPv4 client reaches it
    Client client(v6->port(), "/ws?token=t");
    EXPECT_TRUE(viewers_reach(*v6, 1));
  }
}

TEST(ServeServer, AReloadedSteeringPageSteersAgain) {
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", nullptr);
  auto wait_viewers = [&](std::size_t n) { return viewers_reach(server, n); };
  auto inputs_within = [&](double seconds) { return input_ids_within(server, seconds); };
  auto lecturer = std::make_unique<Client>(server.port(), "/ws");
  ASSERT_TRUE(wait_viewers(1));
  Client student(server.port(), "/ws");
  ASSERT_TRUE(wait_viewers(2));
  lecturer.reset();  // the reload: the page goes ...
  ASSERT_TRUE(wait_viewers(1));
  auto reloaded = std::make_unique<Client>(server.port(), "/ws");  // ... and comes back
  ASSERT_TRUE(wait_viewers(2));
  student.send("p 9 1 1");
  reloaded->send("p 5 10 20");
  EXPECT_EQ(inputs_within(1.0), std::vector<std::uint64_t>{5}) << "the student's input counted, or the lecturer's not";
  // The lecturer leaves for good: the student steers, a few seconds later.
  reloaded.reset();
  ASSERT_TRUE(wait_viewers(1));
  student.send("p 11 1 1");
  EXPECT_TRUE(inputs_within(0.5).empty()) << "control went at once to the page still there";
  std::this_thread::sleep_for(std::chrono::seconds(6));
  student.send("p 12 1 1");
  EXPECT_EQ(inputs_within(2.0), std::vector<std::uint64_t>{12});
}

// The steering tab reloaded steers again where its new connection comes before its old one's close (a fast reload):
// the page names its tab (kept by the browser across reloads). Before, the new page was a watcher beside the old one,
// and once the old one closed, control could go to a student's page. Another tab's id, or a bad one, takes nothing.
TEST(ServeServer, TheSteeringTabReloadedSteersBeforeItsOldPageCloses) {
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", nullptr);
  auto wait_viewers = [&](std::size_t n) { return viewers_reach(server, n); };
  auto inputs_within = [&](double seconds) { return input_ids_within(server, seconds); };
  auto lecturer = std::make_unique<Client>(server.port(), "/ws?tab=0123456789abcdef");
  ASSERT_TRUE(wait_viewers(1));
  Client student(server.port(), "/ws?tab=fedcba9876543210");
  Client spoof(server.port(), "/ws?tab=0123");  // too short: no tab
  ASSERT_TRUE(wait_viewers(3));
  auto reloaded = std::make_unique<Client>(server.port(), "/ws?tab=0123456789abcdef");  // the old page still open
  ASSERT_TRUE(wait_viewers(4));
  lecturer->send("p 3 1 1");
  student.send("p 4 1 1");
  spoof.send("p 6 1 1");
  reloaded->send("p 5 10 20");
  EXPECT_EQ(inputs_within(1.0), std::vector<std::uint64_t>{5}) << "the reloaded tab does not steer";
  lecturer.reset();  // the old page's close, last
  ASSERT_TRUE(wait_viewers(3));
  reloaded->send("p 7 10 20");
  student.send("p 8 1 1");
  EXPECT_EQ(inputs_within(1.0), std::vector<std::uint64_t>{7}) << "the old page's close took control from the reloaded one";
}

// A server started again (the lecture's server restarted at its address): the pages come back in any order, and the
// one that steered before (its tab says so: steered=1) takes control from a watcher's that came back first; one that
// steered before claims nothing over a page that took control, or steered by its claim.
TEST(ServeServer, ThePageThatSteeredBeforeTheServerStartedAgainSteersAgain) {
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", nullptr);
  auto wait_viewers = [&](std::size_t n) { return viewers_reach(server, n); };
  auto inputs_within = [&](double seconds) { return input_ids_within(server, seconds); };
  Client student(server.port(), "/ws?tab=fedcba9876543210");  // back first: steers, by arrival only
  ASSERT_TRUE(wait_viewers(1));
  Client spoof(server.port(), "/ws?steered=1");  // no tab: no claim
  ASSERT_TRUE(wait_viewers(2));
  Client lecturer(server.port(), "/ws?tab=0123456789abcdef&steered=1");
  ASSERT_TRUE(wait_viewers(3));
  student.send("p 3 1 1");
  spoof.send("p 4 1 1");
  lecturer.send("p 5 10 20");
  EXPECT_EQ(inputs_within(1.0), std::vector<std::uint64_t>{5}) << "the page that steered before does not steer";
  // A second claim (a stale tab) takes nothing from a claim; nor from a page that took control with the button.
  Client stale(server.port(), "/ws?tab=00000000000000000000000000000000&steered=1");
  ASSERT_TRUE(wait_viewers(4));
  stale.send("p 6 1 1");
  lecturer.send("p 7 10 20");
  EXPECT_EQ(inputs_within(1.0), std::vector<std::uint64_t>{7}) << "a second claim took control";
  student.send("t 8");
  ASSERT_TRUE(wait_viewers(4));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Client another(server.port(), "/ws?tab=11111111111111111111111111111111&steered=1");
  ASSERT_TRUE(wait_viewers(5));
  another.send("p 9 1 1");
  student.send("p 10 1 1");
  EXPECT_EQ(inputs_within(1.0), std::vector<std::uint64_t>{10}) << "a claim took control from the button's";
}

// A claim is honoured only while the pages of a server started again come back: later, a page's memory of having
// steered is stale (a tab reloaded long after its seat went to a watcher), and the 5 s a steering page has to come
// back stands.
TEST(ServeServer, AClaimLongAfterTheStartIsStale) {
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", nullptr);
  server.set_claim_window(std::chrono::milliseconds(300));
  auto wait_viewers = [&](std::size_t n) { return viewers_reach(server, n); };
  auto inputs_within = [&](double seconds) { return input_ids_within(server, seconds); };
  Client student(server.port(), "/ws?tab=fedcba9876543210");
  ASSERT_TRUE(wait_viewers(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Client late(server.port(), "/ws?tab=0123456789abcdef&steered=1");
  ASSERT_TRUE(wait_viewers(2));
  late.send("p 3 1 1");
  student.send("p 4 1 1");
  EXPECT_EQ(inputs_within(1.0), std::vector<std::uint64_t>{4}) << "a stale claim took control";
}

// A server that stops (Ctrl-C, SIGTERM) tells every page why, with a WebSocket close, 1001 "going away", which the page
// shows; a connection that just ended would read there as 1006, "the server is not reachable". A viewer that answers
// ends the wait at once; one that does not holds the stop up for a bounded time only.
TEST(ServeServer, StoppingTellsEveryViewerWhy) {
  auto server = std::make_unique<WebServer>(ListenAddress{"127.0.0.1", 0}, "unused", "<p>page</p>", nullptr);
  Client answers(server->port(), "/ws"), silent(server->port(), "/ws");
  ASSERT_EQ(answers.status(), 101);
  ASSERT_EQ(silent.status(), 101);
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server->viewers() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(server->viewers(), 2u);
  server->publish(frame_numbered(1));
  auto const began = std::chrono::steady_clock::now();
  std::thread stopping([&] { server->stop("the server stopped: terminated (SIGTERM)"); });
  for (Client* c : {&answers, &silent}) {
    while (c->receive()) {
    }
    EXPECT_EQ(c->close_code(), 1001);
    EXPECT_EQ(c->close_reason(), "the server stopped: terminated (SIGTERM)");
  }
  answers.answer_close();
  stopping.join();
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_LT(seconds, 5.0) << "a viewer that never answers held the stop up";  // the bound: 1 s (kGoodbyeTimeout)
  server.reset();  // a second stop (the destructor's) is nothing
  // A reason longer than a close frame holds is cut, at a character's start.
  auto other = std::make_unique<WebServer>(ListenAddress{"127.0.0.1", 0}, "unused", "<p>page</p>", nullptr);
  Client c(other->port(), "/ws");
  while (other->viewers() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread long_stop([&] { other->stop(std::string(122, 'x') + "\u00e9 and more"); });
  while (c.receive()) {
  }
  c.answer_close();
  long_stop.join();
  EXPECT_EQ(c.close_code(), 1001);
  EXPECT_EQ(c.close_reason(), std::string(122, 'x'));
}

// The status of one plain HTTP request (no WebSocket upgrade), sent as `text`; 0 when none came back.
int http_status(std::uint16_t port, const std::string& text) {
  int const fd = connect_loopback(port);
  std::string reply;
  if (fd >= 0 && write(fd, text.data(), text.size()) == ssize_t(text.size())) {
    char chunk[512];
    ssize_t n = 0;
    while (reply.find("\r\n") == std::string::npos && (n = read(fd, chunk, sizeof chunk)) > 0) reply.append(chunk, n);
  }
  if (fd >= 0) close(fd);
  return reply.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(reply.c_str() + 9) : 0;
}

// Each refusal has the status that says why: a method other than GET 405, a body 400 or 405, the WebSocket's path
// without the upgrade 426, a path the server does not serve 404.
TEST(ServeServer, RefusalsHaveTheStatusThatSaysWhy) {
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  std::string const host = "Host: 127.0.0.1:" + std::to_string(server.port()) + "\r\n";
  EXPECT_EQ(http_status(server.port(), "GET / HTTP/1.1\r\n" + host + "\r\n"), 200);
  EXPECT_EQ(http_status(server.port(), "PUT / HTTP/1.1\r\n" + host + "\r\n"), 405);
  EXPECT_EQ(http_status(server.port(), "POST / HTTP/1.1\r\n" + host + "Content-Length: 3\r\n\r\nx=1"), 405);
  EXPECT_EQ(http_status(server.port(), "GET / HTTP/1.1\r\n" + host + "Content-Length: 3\r\n\r\nx=1"), 400);
  EXPECT_EQ(http_status(server.port(), "GET /ws HTTP/1.1\r\n" + host + "\r\n"), 426);
  EXPECT_EQ(http_status(server.port(), "GET /nope HTTP/1.1\r\n" + host + "\r\n"), 404);
  EXPECT_EQ(server.refused_requests(), 5u);
}

// Refusals are logged up to a bound in a window of time; past it they are counted, and the log says so when the bound
// is reached and gives their count with the first refusal of a later window: a flood is not logged line by line, and
// nothing refused later goes unseen (every refusal past the server's first 20 once went unlogged, unsaid).
TEST(ServeServer, RefusalsPastTheLogsBoundAreCountedAndSaid) {
  std::mutex mutex;
  std::vector<std::string> lines;
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    lines.push_back(line);
  });
  server.bound_refusal_log(3, std::chrono::seconds(2));
  std::string const host = "Host: 127.0.0.1:" + std::to_string(server.port()) + "\r\n";
  auto refuse = [&](int n) {
    for (int k = 0; k < n; ++k) EXPECT_EQ(http_status(server.port(), "GET /nope HTTP/1.1\r\n" + host + "\r\n"), 404);
  };
  auto count = [&](const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex);
    return std::count_if(lines.begin(), lines.end(), [&](auto const& l) { return l.find(text) != std::string::npos; });
  };
  refuse(5);
  EXPECT_EQ(count(": refused"), 3);
  EXPECT_EQ(count("serve: 3 refusals logged within 2 s; more before those 2 s are out are counted, not logged"), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  refuse(1);
  EXPECT_EQ(count("serve: 2 more refusals were counted and not logged before this one"), 1);
  EXPECT_EQ(count(": refused"), 4);
  EXPECT_EQ(server.refused_requests(), 6u);
  EXPECT_EQ(server.unlogged_refusals(), 2u);
}

// The whole reply to one plain HTTP request sent as `text`, read until the server closes the connection (the request
// asks it to) or 2 s pass.
std::string http_reply(std::uint16_t port, const std::string& text) {
  int const fd = connect_loopback(port);
  std::string reply;
  if (fd >= 0 && write(fd, text.data(), text.size()) == ssize_t(text.size())) {
    timeval wait{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    char chunk[4096];
    ssize_t n = 0;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) reply.append(chunk, n);
  }
  if (fd >= 0) close(fd);
  return reply;
}

// A HEAD (a link checker's, a download manager's look before it fetches) is answered as GET is: its status and
// headers, Content-Length the body's, and no body; refused as GET is where GET would be. A refusal of another method
// says GET and HEAD are allowed.
TEST(ServeServer, AHeadIsAnsweredAsAGetWithoutItsBody) {
  std::string const page = "<p>the page</p>";
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", page, {});
  std::string const host = "Host: 127.0.0.1:" + std::to_string(server.port()) + "\r\n";
  std::string const get = http_reply(server.port(), "GET / HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n");
  std::string const head = http_reply(server.port(), "HEAD / HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n");
  ASSERT_EQ(get.rfind("HTTP/1.1 200", 0), 0u) << get;
  ASSERT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Length: " + std::to_string(page.size()) + "\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Type: text/html"), std::string::npos) << head;
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n") << "no body: " << head;
  EXPECT_EQ(get.substr(get.size() - page.size()), page);
  // Kept alive, a HEAD's answer leaves the connection ready for the next request.
  std::string const two = http_reply(server.port(), "HEAD / HTTP/1.1\r\n" + host + "\r\nGET / HTTP/1.1\r\n" + host +
                                                        "Connection: close\r\n\r\n");
  EXPECT_EQ(two.substr(two.size() - page.size()), page) << two;
  // A malformed request after a HEAD on that connection is answered with its body (the HEAD was the request before).
  std::string const after = http_reply(server.port(), "HEAD / HTTP/1.1\r\n" + host + "\r\nGARBAGE\x01 / HTTP/1.1\r\n\r\n");
  EXPECT_NE(after.find("HTTP/1.1 400"), std::string::npos) << after;
  EXPECT_EQ(after.substr(after.size() - 12), "bad request\n") << after;
  // Refused where a GET is, without the refusal's text.
  std::string const missing = http_reply(server.port(), "HEAD /nope HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n");
  EXPECT_EQ(missing.rfind("HTTP/1.1 404", 0), 0u) << missing;
  EXPECT_EQ(missing.substr(missing.size() - 4), "\r\n\r\n") << missing;
  std::string const put = http_reply(server.port(), "PUT / HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n");
  EXPECT_EQ(put.rfind("HTTP/1.1 405", 0), 0u) << put;
  EXPECT_NE(put.find("Allow: GET, HEAD\r\n"), std::string::npos) << put;
}

// A client that goes away in the middle of its request (its connection reset: a page closed as it loads, a link
// checker) asked nothing wrong: it is no refusal, in the log or the count. A malformed one is (the control).
TEST(ServeServer, AClientGoneMidRequestIsNoRefusal) {
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  int const fd = connect_loopback(server.port());
  ASSERT_GE(fd, 0);
  std::string const part = "GET / HTTP/1.1\r\nHo";
  ASSERT_EQ(write(fd, part.data(), part.size()), ssize_t(part.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  linger reset{1, 0};  // closed with a reset, as a browser tab's connection often is
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(server.refused_requests(), 0u);
  // Nor is a browser's look for an icon, which every text page the server answers with draws (a token's refusal).
  EXPECT_EQ(http_status(server.port(), "GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), 404);
  EXPECT_EQ(server.refused_requests(), 0u);
  EXPECT_EQ(http_status(server.port(), "GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n"), 400);
  EXPECT_EQ(server.refused_requests(), 1u);
}

// On the loopback (no token), the Host must name it, whole: a DNS name that begins like an address
// ("127.0.0.1.evil.example") is another site's, pointed at 127.0.0.1, and its page would steer.
TEST(ServeServer, OnTheLoopbackTheHostNamesItWhole) {
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  std::string const port = std::to_string(server.port());
  auto status = [&](const std::string& host) {
    return http_status(server.port(), "GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
  };
  for (std::string const& host : std::vector<std::string>{"127.0.0.1:" + port, "127.0.0.1", "localhost:" + port, "LOCALHOST",
                                 "127.1.2.3:" + port, "[::1]:" + port, "[::1]"})
    EXPECT_EQ(status(host), 200) << host;
  for (std::string const& host : std::vector<std::string>{
           "127.0.0.1.evil.example:" + port, "127.0.0.1.evil.example", "127.0.0.1evil:" + port, "127.0.0.1.:" + port,
        "localhost.evil.example", "evil.example:" + port, "127.1:" + port, "0x7f.0.0.1", "[::1].evil", "[::2]:" + port,
        "127.0.0.1:" + port + "x", "127.0.0.1:", "[::1", ""})
    EXPECT_EQ(status(host), 403) << host;
}

TEST(ServeServer, TokenIsCheckedOnEveryRequestOffTheLoopback) {
  WebServer server({"0.0.0.0", 0}, "0123456789abcdef0123456789abcdef", "<p>page</p>", {});
  ASSERT_FALSE(server.loopback());
  EXPECT_EQ(Client(server.port(), "/ws").status(), 403);
  EXPECT_EQ(Client(server.port(), "/ws?token=0123456789abcdef0123456789abcdee").status(), 403);
  EXPECT_EQ(Client(server.port(), "/ws?token=0123456789abcdef0123456789abcdef").status(), 101);
  EXPECT_EQ(server.refused_requests(), 2u);
}

// Every interface however the host is written ("0" is 0.0.0.0 to inet_aton), so the URL printed at start
// names the machine rather than a host another machine cannot open.
TEST(ServeServer, KnowsWhenItIsBoundToEveryInterface) {
  for (std::string const host : {"0.0.0.0", "0", "0.0"}) {
    WebServer server({host, 0}, "0123456789abcdef0123456789abcdef", "<p>page</p>", {});
    EXPECT_TRUE(server.every_interface()) << host;
    EXPECT_FALSE(server.loopback()) << host;
  }
  WebServer loopback({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  EXPECT_FALSE(loopback.every_interface());
}

// One GET (or another `method`) of `target` to the end of the connection: the status line and headers, and the body.
// `headers`: more of them, each ending in CRLF.
std::pair<std::string, std::string> http_get(std::uint16_t port, const std::string& target,
                                             const std::string& headers = "", const std::string& method = "GET") {
  int const fd = connect_loopback(port);
  std::string const request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\n" + headers + "Connection: close\r\n\r\n";
  std::string reply;
  if (fd >= 0 && write(fd, request.data(), request.size()) == ssize_t(request.size())) {
    char chunk[65536];
    ssize_t n = 0;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) reply.append(chunk, std::size_t(n));
  }
  if (fd >= 0) close(fd);
  std::size_t const end = reply.find("\r\n\r\n");
  if (end == std::string::npos) return {reply, ""};
  return {reply.substr(0, end), reply.substr(end + 4)};
}

// A page that reads slowly (a frame of 32 MB still being sent to it) while many texts wait for it: the older texts
// may be dropped, never whether it steers. Another page took control meanwhile: the slow one learns it lost it.
TEST(ServeServer, ASlowPageIsToldWhetherItSteersWhateverElseWaits) {
  auto const folder = std::filesystem::temp_directory_path() / ("nbody_serve_slow_" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  Client slow(server.port(), "/ws");
  ASSERT_EQ(slow.status(), 101);
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.viewers() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(slow.receive()->second, "control 1");
  FrameHeader h;
  h.sequence = 1;
  auto big = std::make_shared<std::vector<std::uint8_t>>(kFrameHeaderBytes + (32u << 20), std::uint8_t(1));
  write_frame_header(h, big->data());
  server.publish(big);  // more than the sockets hold: its write waits for the page to read
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int k = 0; k < 20; ++k) {
    std::string const path = (folder / ("shot" + std::to_string(k) + ".png")).string();
    std::ofstream(path) << "png";
    server.offer_file(path);
  }
  Client other(server.port(), "/ws");
  ASSERT_EQ(other.status(), 101);
  std::optional<std::pair<int, std::string>> m;
  while ((m = other.receive()) && m->second.rfind("control ", 0) != 0) {
  }
  ASSERT_TRUE(m);
  other.send("t 1");  // takes control
  while ((m = other.receive()) && m->second != "control 1") {
  }
  ASSERT_TRUE(m) << "the other page was given control";
  for (int k = 20; k < 25; ++k) {  // and more texts behind it
    std::string const path = (folder / ("shot" + std::to_string(k) + ".png")).string();
    std::ofstream(path) << "png";
    server.offer_file(path);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The slow page reads now: its frame, then what waited.
  std::vector<std::string> texts;
  while ((m = slow.receive()))
    if (m->first == 1) {
      texts.push_back(m->second);
      if (m->second == "file shot24.png") break;
    }
  ASSERT_FALSE(texts.empty());
  EXPECT_EQ(texts.back(), "file shot24.png") << "the newest text arrives";
  std::string last_control;
  for (auto const& t : texts)
    if (t.rfind("control ", 0) == 0) last_control = t;
  EXPECT_EQ(last_control, "control 0") << "the slow page learns it no longer steers";
  std::filesystem::remove_all(folder);
}

// The keys' screenshots and checkpoints are written on the server; a browser elsewhere gets them as downloads. Each
// viewer is told the name, the file is sent whole as it is on disk when asked for, and nothing else is served: not
// a name never offered, not a path outside, not one offered before the newest kMaxFilesOffered, nor one gone.
TEST(ServeServer, OffersTheFilesTheKeysWroteForDownload) {
  auto const folder = std::filesystem::temp_directory_path() / ("nbody_serve_files_" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::string const name = "nbody-20261203-120000.png", path = (folder / name).string();
  std::string bytes(300000, '\0');  // several writes' worth, none of them text
  std::mt19937 random(7);
  for (char& b : bytes) b = char(random());
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));

  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  Client viewer(server.port(), "/ws");
  ASSERT_EQ(viewer.status(), 101);
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.viewers() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_NE(http_get(server.port(), "/files/" + name).first.find(" 404 "), std::string::npos);  // not offered yet

  server.offer_file(path);
  std::optional<std::pair<int, std::string>> told;
  while ((told = viewer.receive()) && told->second.rfind("control ", 0) == 0) {
  }
  ASSERT_TRUE(told);
  EXPECT_EQ(told->first, 1);
  EXPECT_EQ(told->second, "file " + name);

  // A page that connects later (a reload, another viewer) is told the newest too.
  Client reloaded(server.port(), "/ws");
  ASSERT_EQ(reloaded.status(), 101);
  while ((told = reloaded.receive()) && told->second.rfind("control ", 0) == 0) {
  }
  ASSERT_TRUE(told);
  EXPECT_EQ(told->second, "file " + name);

  auto const [head, body] = http_get(server.port(), "/files/" + name);
  EXPECT_EQ(head.rfind("HTTP/1.1 200 ", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Type: image/png"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Disposition: attachment; filename=\"" + name + "\""), std::string::npos) << head;
  EXPECT_TRUE(body == bytes) << body.size() << " bytes sent of " << bytes.size();

  for (std::string const& other : std::vector<std::string>{"/files/../" + name, "/files/" + name + "x", "/files/",
                                                           "/files//etc/passwd"})
    EXPECT_NE(http_get(server.port(), other).first.find(" 404 "), std::string::npos) << other;

  // The newest kMaxFilesOffered: one more each pushes the oldest out.
  for (std::size_t k = 0; k < kMaxFilesOffered; ++k) server.offer_file((folder / ("more" + std::to_string(k))).string());
  std::string more;
  auto const later = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {  // the offers reach the network thread in order: the last one offered (and absent) means every one is
    more = http_get(server.port(), "/files/more" + std::to_string(kMaxFilesOffered - 1)).second;
  } while (more.find("no longer in the server's folder") == std::string::npos && std::chrono::steady_clock::now() < later);
  EXPECT_NE(more.find("no longer in the server's folder"), std::string::npos) << more;
  EXPECT_NE(http_get(server.port(), "/files/" + name).first.find(" 404 "), std::string::npos);

  // Offered again, then removed from the folder: a 404 that says so.
  server.offer_file(path);
  std::filesystem::remove(path);
  std::string gone;
  auto const again = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do gone = http_get(server.port(), "/files/" + name).second;
  while (gone.find("no longer in the server's folder") == std::string::npos && std::chrono::steady_clock::now() < again);
  EXPECT_NE(gone.find(name + ": no longer in the server's folder"), std::string::npos) << gone;
  std::filesystem::remove_all(folder);
}

// A download cut off (a dropped ssh tunnel) goes on from where it stopped: a Range asks for one part of the file,
// answered 206 with its bytes and Content-Range; a range past the end is 416; several ranges, or an If-Range of
// another state of the file (replaced since the first part), get the whole file; a HEAD says what a GET would.
TEST(ServeServer, ADownloadResumesFromWhereItStopped) {
  auto const folder = std::filesystem::temp_directory_path() / ("nbody_serve_range_" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::string const name = "nbody-20261205-120000.h5", path = (folder / name).string();
  std::string bytes(200000, '\0');
  std::mt19937 random(11);
  for (char& b : bytes) b = char(random());
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  // Written an hour ago: its date is a strong validator (a second or more before any answer).
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) - std::chrono::hours(1));
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  server.offer_file(path);
  std::string const target = "/files/" + name;
  std::pair<std::string, std::string> whole;
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do whole = http_get(server.port(), target);  // the offer reaches the network thread
  while (whole.first.find(" 200 ") == std::string::npos && std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(whole.first.rfind("HTTP/1.1 200 ", 0), 0u) << whole.first;
  EXPECT_TRUE(whole.second == bytes);
  EXPECT_NE(whole.first.find("Accept-Ranges: bytes\r\n"), std::string::npos) << whole.first;
  std::size_t const at = whole.first.find("ETag: ");
  ASSERT_NE(at, std::string::npos) << whole.first;
  std::string const tag = whole.first.substr(at + 6, whole.first.find("\r\n", at) - at - 6);

  struct Case {
    std::string range;
    std::size_t first, length;
  };
  for (Case const& c : {Case{"bytes=1000-1999", 1000, 1000}, Case{"bytes=199000-", 199000, 1000},
                        Case{"bytes=-500", 199500, 500}, Case{"bytes=150000-999999", 150000, 50000},
                        Case{"bytes=0-0", 0, 1}}) {
    auto const [head, body] = http_get(server.port(), target, "Range: " + c.range + "\r\n");
    EXPECT_EQ(head.rfind("HTTP/1.1 206 ", 0), 0u) << c.range << ": " << head;
    EXPECT_NE(head.find("Content-Range: bytes " + std::to_string(c.first) + "-" +
                        std::to_string(c.first + c.length - 1) + "/200000\r\n"),
              std::string::npos)
        << c.range << ": " << head;
    EXPECT_NE(head.find("Content-Length: " + std::to_string(c.length) + "\r\n"), std::string::npos) << head;
    EXPECT_TRUE(body == bytes.substr(c.first, c.length)) << c.range << ": " << body.size() << " bytes";
  }
  // Resumed with the first part's tag: the part; with another's, the whole of the file as it is now.
  auto const same = http_get(server.port(), target, "Range: bytes=100-199\r\nIf-Range: " + tag + "\r\n");
  EXPECT_EQ(same.first.rfind("HTTP/1.1 206 ", 0), 0u) << same.first;
  EXPECT_TRUE(same.second == bytes.substr(100, 100));
  auto const other = http_get(server.port(), target, "Range: bytes=100-199\r\nIf-Range: \"1-2\"\r\n");
  EXPECT_EQ(other.first.rfind("HTTP/1.1 200 ", 0), 0u) << other.first;
  EXPECT_TRUE(other.second == bytes);
  // Every answer is dated (RFC 9110: "Sun, 06 Nov 1994 08:49:37 GMT"), and a file's says when it was modified: a
  // client that resumes by that date gets the part, one with another date the whole file.
  auto const header = [](const std::string& head, const std::string& field) {
    std::size_t const line = head.find("\r\n" + field + ": ");
    if (line == std::string::npos) return std::string();
    std::size_t const from = line + field.size() + 4;
    return head.substr(from, head.find("\r\n", from) - from);
  };
  std::regex const date(R"([A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT)");
  EXPECT_TRUE(std::regex_match(header(whole.first, "Date"), date)) << whole.first;
  std::string const modified = header(whole.first, "Last-Modified");
  ASSERT_TRUE(std::regex_match(modified, date)) << whole.first;
  EXPECT_NE(modified, header(whole.first, "Date"));
  auto const by_date = http_get(server.port(), target, "Range: bytes=100-199\r\nIf-Range: " + modified + "\r\n");
  EXPECT_EQ(by_date.first.rfind("HTTP/1.1 206 ", 0), 0u) << by_date.first;
  EXPECT_TRUE(by_date.second == bytes.substr(100, 100));
  auto const other_date =
      http_get(server.port(), target, "Range: bytes=100-199\r\nIf-Range: Sun, 06 Nov 1994 08:49:37 GMT\r\n");
  EXPECT_EQ(other_date.first.rfind("HTTP/1.1 200 ", 0), 0u) << other_date.first;
  EXPECT_TRUE(other_date.second == bytes);
  // Past the end: 416, saying the size. Several ranges, another unit, nonsense: the whole file.
  auto const past = http_get(server.port(), target, "Range: bytes=200000-\r\n");
  EXPECT_EQ(past.first.rfind("HTTP/1.1 416 ", 0), 0u) << past.first;
  EXPECT_NE(past.first.find("Content-Range: bytes */200000\r\n"), std::string::npos) << past.first;
  for (std::string const ignored : {"bytes=0-1,5-6", "lines=1-2", "bytes=5-1", "bytes=x-", "bytes=-"}) {
    auto const [head, body] = http_get(server.port(), target, "Range: " + ignored + "\r\n");
    EXPECT_EQ(head.rfind("HTTP/1.1 200 ", 0), 0u) << ignored << ": " << head;
    EXPECT_TRUE(body == bytes) << ignored;
  }
  // A HEAD with a Range: the part's status and length, no body.
  auto const head = http_get(server.port(), target, "Range: bytes=10-19\r\n", "HEAD");
  EXPECT_EQ(head.first.rfind("HTTP/1.1 206 ", 0), 0u) << head.first;
  EXPECT_NE(head.first.find("Content-Length: 10\r\n"), std::string::npos) << head.first;
  EXPECT_TRUE(head.second.empty()) << head.second.size();
  std::filesystem::remove_all(folder);
}

// A download read slowly but steadily (a congested tunnel: 5 KB/s, less than one part of the file in the request
// timeout) goes on past that timeout, as long as it moves, and arrives whole.
TEST(ServeServer, ASlowDownloadThatMovesIsNotDropped) {
  auto const folder = std::filesystem::temp_directory_path() / ("nbody_serve_slow_download_" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::string const name = "nbody-20261205-130000.h5", path = (folder / name).string();
  std::string bytes(std::size_t(8) << 20, '\0');  // more than the server's socket buffers take (4 MB at most)
  std::mt19937 random(5);
  for (char& b : bytes) b = char(random());
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  server.offer_file(path);
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (http_get(server.port(), "/files/" + name, "", "HEAD").first.find(" 200 ") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // A small receive window, set before the connection is made, so that the server's writes wait on the reader.
  int const fd = socket(AF_INET, SOCK_STREAM, 0);
  int const window = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &window, sizeof window);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(server.port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  std::string const request = "GET /files/" + name + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server.port()) +
                              "\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(write(fd, request.data(), request.size()), ssize_t(request.size()));
  std::string reply;
  char chunk[1024];
  auto const start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(14)) {  // 1 KB every 200 ms
    ssize_t const n = read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    reply.append(chunk, std::size_t(n));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_LT(reply.size(), bytes.size()) << "the reader was not slow";
  ssize_t n = 0;
  while ((n = read(fd, chunk, sizeof chunk)) > 0) reply.append(chunk, std::size_t(n));  // then the rest at once
  close(fd);
  std::size_t const end = reply.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 ", 0), 0u) << reply.substr(0, end);
  EXPECT_TRUE(reply.substr(end + 4) == bytes) << reply.size() - end - 4 << " bytes of " << bytes.size();
  std::filesystem::remove_all(folder);
}

// A GET of `target` whose reply is read to the end of its headers and no further (a download that stalls): the
// connection, and the status line and headers; -1 where nothing came.
std::pair<int, std::string> http_head_of(std::uint16_t port, const std::string& target) {
  int const fd = connect_loopback(port);
  std::string const request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
  std::string reply;
  if (fd >= 0 && write(fd, request.data(), request.size()) == ssize_t(request.size())) {
    char c = 0;
    while (reply.find("\r\n\r\n") == std::string::npos && read(fd, &c, 1) == 1) reply += c;
  }
  if (reply.empty() && fd >= 0) close(fd);
  return {reply.empty() ? -1 : fd, reply};
}

// Each download holds a file open as long as it moves: kMaxDownloads at once, and one more is told to try again
// (503, saying why) until one of them ends.
TEST(ServeServer, DownloadsAtOnceAreBounded) {
  auto const folder = std::filesystem::temp_directory_path() / ("nbody_serve_downloads_" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::string const name = "nbody-20261203-120000.h5", path = (folder / name).string();
  {  // more than a connection's socket buffers hold: a download that is not read stays in flight
    std::ofstream out(path, std::ios::binary);
    std::string const block(1 << 20, 'x');
    for (int k = 0; k < 64; ++k) out.write(block.data(), std::streamsize(block.size()));
  }
  WebServer server({"127.0.0.1", 0}, "unused on the loopback", "<p>page</p>", {});
  server.offer_file(path);
  std::string const target = "/files/" + name;
  std::vector<int> stalled;
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (stalled.size() < kMaxDownloads && std::chrono::steady_clock::now() < deadline) {
    auto const [fd, head] = http_head_of(server.port(), target);
    if (head.rfind("HTTP/1.1 200 ", 0) == 0)
      stalled.push_back(fd);
    else if (fd >= 0)
      close(fd);  // not offered yet: the offer reaches the network thread soon
  }
  ASSERT_EQ(stalled.size(), kMaxDownloads);
  auto const [refused, head] = http_head_of(server.port(), target);
  EXPECT_EQ(head.rfind("HTTP/1.1 503 ", 0), 0u) << head;
  if (refused >= 0) {
    std::string body(512, '\0');
    ssize_t const n = read(refused, body.data(), body.size());
    body.resize(n > 0 ? std::size_t(n) : 0);
    EXPECT_NE(body.find(std::to_string(kMaxDownloads) + " downloads are already being sent"), std::string::npos)
        << body;
    close(refused);
  }
  // One ends (its reader gone): the next is sent.
  close(stalled.back());
  stalled.pop_back();
  std::string again;
  auto const later = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    auto const [fd, h] = http_head_of(server.port(), target);
    again = h;
    if (fd >= 0) close(fd);
  } while (again.rfind("HTTP/1.1 200 ", 0) != 0 && std::chrono::steady_clock::now() < later);
  EXPECT_EQ(again.rfind("HTTP/1.1 200 ", 0), 0u) << again;
  for (int fd : stalled) close(fd);
  std::filesystem::remove_all(folder);
}

// Off the loopback a download needs the token too.
TEST(ServeServer, DownloadsNeedTheTokenOffTheLoopback) {
  auto const folder = std::filesystem::temp_directory_path() / ("nbody_serve_token_" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::string const path = (folder / "nbody-20261203-120000.h5").string();
  std::ofstream(path) << "checkpoint";
  WebServer server({"0.0.0.0", 0}, "0123456789abcdef0123456789abcdef", "<p>page</p>", {});
  server.offer_file(path);
  std::string const target = "/files/nbody-20261203-120000.h5";
  std::pair<std::string, std::string> got;
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do got = http_get(server.port(), target + "?token=0123456789abcdef0123456789abcdef");
  while (got.first.find(" 200 ") == std::string::npos && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(got.second, "checkpoint");
  EXPECT_NE(got.first.find("Content-Type: application/x-hdf5"), std::string::npos) << got.first;
  EXPECT_NE(http_get(server.port(), target).first.find(" 403 "), std::string::npos);
  EXPECT_NE(http_get(server.port(), target + "?token=0123456789abcdef0123456789abcdee").first.find(" 403 "),
            std::string::npos);
  std::filesystem::remove_all(folder);
}
#endif

TEST(ServeText, PagesSeeFileNamesWithoutTheServersFolders) {
  std::vector<std::string> const folders{"/home/ann smith/My Pictures/", "out/today", "/home/ann smith"};
  EXPECT_EQ(without_folders("saved /home/ann smith/My Pictures/nbody-20261205-032902.h5", folders),
            "saved nbody-20261205-032902.h5");
  EXPECT_EQ(without_folders("screenshot not written: /home/ann smith/My Pictures/shot.png: No space left on device "
                            "(--screenshot-dir chooses the folder)", folders),
            "screenshot not written: shot.png: No space left on device (--screenshot-dir chooses the folder)");
  // A folder given relative, matched as given and as an absolute path; a folder named alone, by its last part; a
  // path further down a hidden folder keeps what is below it.
  std::string const absolute = (std::filesystem::current_path() / "out/today").string();
  EXPECT_EQ(without_folders("saved out/today/x.png; " + absolute + "/y.h5 in " + absolute, folders),
            "saved x.png; y.h5 in today");
  EXPECT_EQ(without_folders("could not apply the change: [/home/ann smith/runs/c.h5] (the folder /home/ann smith "
                            "does not exist)", folders),
            "could not apply the change: [runs/c.h5] (the folder ann smith does not exist)");
  // What names no hidden folder stays: other paths, HDF5 groups, fractions, longer names that begin alike.
  EXPECT_EQ(without_folders("/Header/Checksum: dt max 1/16, 2K/|W| = 1.02, speed /2, /home/ann smithers/x, "
                            "out/todays/x", folders),
            "/Header/Checksum: dt max 1/16, 2K/|W| = 1.02, speed /2, /home/ann smithers/x, out/todays/x");
  EXPECT_EQ(without_folders("", folders), "");
  EXPECT_EQ(without_folders("saved /tmp/x.h5", {}), "saved /tmp/x.h5");
}

}  // namespace
}  // namespace nbody::app::serve
