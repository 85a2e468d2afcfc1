// app/serve_protocol.cpp - the listen address, the token and the browser's messages, parsed.
#include "app/serve_protocol.h"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/errors.h"

namespace nbody::app::serve {
namespace {

template <class T>
std::optional<T> whole(std::string_view text) {
  T value{};
  auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// A finite number written plainly ("12", "-3.5"): no exponents, no "nan", at most 16 characters.
std::optional<float> real(std::string_view text) {
  if (text.empty() || text.size() > 16) return std::nullopt;
  for (char ch : text)
    if (!(ch == '-' || ch == '.' || (ch >= '0' && ch <= '9'))) return std::nullopt;
  char buffer[17];
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  char* end = nullptr;
  float const v = std::strtof(buffer, &end);
  if (end != buffer + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<std::string_view> fields(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  while (begin <= text.size() && out.size() < 8) {  // more than any message has: refused by count
    std::size_t const space = text.find(' ', begin);
    out.push_back(text.substr(begin, space == std::string_view::npos ? std::string_view::npos : space - begin));
    if (space == std::string_view::npos) break;
    begin = space + 1;
  }
  return out;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
  auto refuse = [&](const std::string& why) {
    throw InputError("--serve " + (text.empty() ? std::string("''") : text) + ": " + why +
                     "; give [HOST:]PORT, e.g. 8080 (this machine only), 127.0.0.1:8080 or 0.0.0.0:8080 "
                     "(every interface, with a token)");
  };
  ListenAddress address;
  std::string port_text = text;
  if (text.find("://") != std::string::npos) refuse("that is a URL; give the address to listen on, not one to open");
  if (!text.empty() && text.front() == '[') {  // [IPv6]:PORT
    std::size_t const close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      refuse("an IPv6 host is written [HOST]:PORT");
    address.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else if (std::size_t const colon = text.rfind(':'); colon != std::string::npos) {
    if (text.find(':') != colon) {
      // "127.0.0.1:8080:1": a host with no ':' of its own, then more than a port; else a bare IPv6 address.
      std::string const host = text.substr(0, text.find(':'));
      bool const ipv6 = host.empty() || host.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
      refuse(ipv6 ? "an IPv6 host is written in brackets, [HOST]:PORT"
                  : "more than one ':' after the host " + host + "; HOST:PORT has one");
    }
    address.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (address.host.empty()) refuse("the host before ':' is empty");
  if (address.host.size() > 253) refuse("the host name is longer than 253 characters");
  for (char ch : address.host)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == ':' || ch == '%' || ch == '_'))
      refuse("the host has a character that no host name or address has");
  auto const port = whole<unsigned>(port_text);
  if (!port || *port > 65535) refuse("the port must be a whole number from 0 (any free port) to 65535");
  address.port = std::uint16_t(*port);
  return address;
}

std::string random_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t const n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeFailure(std::string("--serve: no random bytes for the token: ") + std::strerror(errno));
    got += std::size_t(n);
  }
  static const char* const hex = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) token += hex[b >> 4], token += hex[b & 15];
  return token;
}

bool tokens_equal(std::string_view given, std::string_view expected) {
  // Every byte of the expected token is looked at whatever the given one holds.
  unsigned difference = given.size() == expected.size() ? 0u : 1u;
  for (std::size_t k = 0; k < expected.size(); ++k)
    difference |= unsigned(static_cast<unsigned char>(expected[k]) ^
                           static_cast<unsigned char>(k < given.size() ? given[k] : 0));
  return difference == 0 && !expected.empty();
}

std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

bool tab_id(std::string_view text) {
  return text.size() >= 8 && text.size() <= 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
}

std::string without_folders(std::string_view text, std::vector<std::string> folders) {
  // Each folder as given and as an absolute path, without a trailing slash; the longest first, so that a folder
  // inside another is left out whole.
  std::vector<std::string> hidden;
  for (auto const& given : folders) {
    if (given.empty()) continue;
    std::error_code ec;
    std::filesystem::path const absolute = std::filesystem::absolute(given, ec).lexically_normal();
    for (std::string f : {given, ec ? std::string() : absolute.string()}) {
      while (f.size() > 1 && f.back() == '/') f.pop_back();
      if (!f.empty() && f != "/" && f != ".") hidden.push_back(f);
    }
  }
  std::sort(hidden.begin(), hidden.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string out(text);
  for (auto const& f : hidden) {
    std::string const name = std::filesystem::path(f).filename().string();
    for (std::size_t at = out.find(f); at != std::string::npos; at = out.find(f, at)) {
      // Only where the folder is whole: not the end of a longer name before it, nor the start of a longer one.
      bool const starts = at == 0 || std::string_view(" \t\n'\"([=").find(out[at - 1]) != std::string_view::npos;
      std::size_t const after = at + f.size();
      bool const inside = after < out.size() && out[after] == '/';
      bool const ends = after == out.size() || std::string_view(" \t\n'\")],:;.").find(out[after]) != std::string_view::npos;
      if (starts && inside) {  // a path in it: the folder left out ("saved nbody-1.h5")
        out.erase(at, f.size() + 1);
      } else if (starts && ends) {  // the folder itself: its name
        out.replace(at, f.size(), name);
        at += name.size();
      } else {
        at += f.size();
      }
    }
  }
  return out;
}

std::optional<std::string> query_value(std::string_view target, std::string_view name) {
  std::size_t const q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    std::size_t const amp = query.find('&');
    std::string_view const pair = query.substr(0, amp);
    std::size_t const eq = pair.find('=');
    if (pair.substr(0, eq) == name) return std::string(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return std::nullopt;
}

ParseResult parse_client_message(std::string_view text) {
  ParseResult r;
  if (text.size() > kMaxMessageBytes) {
    r.error = "message of " + std::to_string(text.size()) + " bytes (at most " + std::to_string(kMaxMessageBytes) + ")";
    return r;
  }
  auto const f = fields(text);
  auto fail = [&](const std::string& why) {
    r.error = why + ": '" + std::string(text.substr(0, 64)) + "'";
    return r;
  };
  if (f[0].size() != 1) return fail("unknown message");
  char const kind = f[0][0];
  std::size_t expected = 0;
  switch (kind) {
    case 'p': expected = 4; break;
    case 'd': case 'u': expected = 5; break;
    case 'w': case 'c': case 'm': expected = 3; break;
    case 'k': expected = 5; break;
    case 's': expected = 4; break;
    case 't': case 'a': expected = 2; break;
    default: return fail("unknown message");
  }
  if (f.size() != expected) return fail("expected " + std::to_string(expected) + " fields");
  auto const id = whole<std::uint64_t>(f[1]);
  if (!id) return fail(kind == 'a' ? "the frame number is not a whole number" : "the event id is not a whole number");
  ClientMessage m;
  m.id = *id;
  // Positions within twice the largest frame either way (a drag may leave the page).
  auto position = [&](std::string_view a, std::string_view b) -> std::optional<std::pair<float, float>> {
    auto const x = real(a), y = real(b);
    if (!x || !y || std::fabs(*x) > 2.0f * kMaxFrameWidth || std::fabs(*y) > 2.0f * kMaxFrameHeight) return std::nullopt;
    return std::pair{*x, *y};
  };
  switch (kind) {
    case 'p': {
      auto const p = position(f[2], f[3]);
      if (!p) return fail("the position is not a pair of numbers within the frame's bounds");
      m.event = PointerMove{p->first, p->second};
      break;
    }
    case 'd': case 'u': {
      auto const button = whole<int>(f[2]);
      auto const p = position(f[3], f[4]);
      if (!button || *button < 0 || *button > 2) return fail("the button is not 0, 1 or 2");
      if (!p) return fail("the position is not a pair of numbers within the frame's bounds");
      m.event = Button{*button, kind == 'd', p->first, p->second};
      break;
    }
    case 'w': {
      auto const dy = real(f[2]);
      if (!dy || std::fabs(*dy) > 100.0f) return fail("the wheel step is not a number from -100 to 100");
      m.event = Wheel{*dy};
      break;
    }
    case 'k': {
      auto const down = whole<int>(f[2]);
      auto const mods = whole<int>(f[4]);
      std::optional<Key> key;
      for (std::size_t k = 0; k < kKeyNames.size(); ++k)
        if (f[3] == kKeyNames[k]) key = Key(k);
      if (!down || (*down != 0 && *down != 1)) return fail("a key is down (1) or up (0)");
      if (!key) return fail("unknown key");
      if (!mods || *mods < 0 || *mods > 15) return fail("the modifiers are a number from 0 to 15");
      m.event = KeyEvent{*key, *down == 1, *mods};
      break;
    }
    case 'm': {
      auto const mods = whole<int>(f[2]);
      if (!mods || *mods < 0 || *mods > 15) return fail("the modifiers are a number from 0 to 15");
      m.event = Modifiers{*mods};
      break;
    }
    case 'c': {
      auto const cp = whole<std::uint32_t>(f[2]);
      // Printable characters only: controls (Enter, Tab...) come as keys.
      if (!cp || *cp < 32 || *cp == 127 || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
        return fail("the character is not a printable Unicode code point");
      m.event = Character{*cp};
      break;
    }
    case 's': {
      auto const w = whole<int>(f[2]), h = whole<int>(f[3]);
      if (!w || !h || *w < kMinFrameSide || *h < kMinFrameSide || *w > kMaxFrameWidth || *h > kMaxFrameHeight)
        return fail("the frame size must be " + std::to_string(kMinFrameSide) + " to " +
                    std::to_string(kMaxFrameWidth) + " x " + std::to_string(kMinFrameSide) + " to " +
                    std::to_string(kMaxFrameHeight));
      m.event = FrameSize{*w, *h};
      break;
    }
    case 't':
      m.event = TakeControl{};
      break;
    case 'a':
      m.event = Acknowledge{};
      break;
  }
  r.message = m;
  return r;
}

namespace {
void put64(std::uint8_t*& out, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) *out++ = std::uint8_t(v >> (8 * k));
}
void put32(std::uint8_t*& out, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) *out++ = std::uint8_t(v >> (8 * k));
}
std::uint64_t get64(const std::uint8_t*& in) {
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v |= std::uint64_t(*in++) << (8 * k);
  return v;
}
std::uint32_t get32(const std::uint8_t*& in) {
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k) v |= std::uint32_t(*in++) << (8 * k);
  return v;
}
std::uint64_t bits(double d) {
  std::uint64_t v;
  std::memcpy(&v, &d, sizeof v);
  return v;
}
double from_bits(std::uint64_t v) {
  double d;
  std::memcpy(&d, &v, sizeof d);
  return d;
}
}  // namespace

void write_frame_header(const FrameHeader& h, std::uint8_t* out) {
  std::memcpy(out, kFrameMagic, 4);
  out += 4;
  for (std::uint64_t v : {h.sequence, h.last_input, h.rendered_us, h.encoded_us, h.step, h.bodies, bits(h.time),
                          bits(h.steps_per_s)})
    put64(out, v);
  put32(out, h.width);
  put32(out, h.height);
  put32(out, h.flags);
}

std::optional<FrameHeader> read_frame_header(const std::uint8_t* in, std::size_t size) {
  if (size < kFrameHeaderBytes || std::memcmp(in, kFrameMagic, 4) != 0) return std::nullopt;
  in += 4;
  FrameHeader h;
  h.sequence = get64(in);
  h.last_input = get64(in);
  h.rendered_us = get64(in);
  h.encoded_us = get64(in);
  h.step = get64(in);
  h.bodies = get64(in);
  h.time = from_bits(get64(in));
  h.steps_per_s = from_bits(get64(in));
  h.width = get32(in);
  h.height = get32(in);
  h.flags = get32(in);
  return h;
}

}  // namespace nbody::app::serve
