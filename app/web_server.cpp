// app/web_server.cpp - the network side of `nbody --serve`: Boost.Beast on one Asio thread. Every
// request is read with bounded sizes and times; every session holds at most one frame waiting.
#include "app/web_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <set>

#include "core/errors.h"

namespace nbody::app::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(10);   // to send a whole HTTP request
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);  // WebSocket upgrade
constexpr auto kIdleTimeout = std::chrono::seconds(20);       // no data from a viewer (pings every 10 s)
constexpr std::size_t kMaxHeaderBytes = 8192;
constexpr std::uint64_t kMaxRefusedPerViewer = 100;           // then the viewer is closed
constexpr std::size_t kMaxTextsWaiting = 8;                   // control notices to one viewer
// A stopping server's wait for its viewers to answer its close frame: a page answers at once, and a viewer that
// does not (gone, or stalled) must not hold up a Ctrl-C or SIGTERM more than this.
constexpr auto kGoodbyeTimeout = std::chrono::milliseconds(1000);

// "host:port" of a Host header, or of an Origin's authority ("http://host:port").
std::string authority_of_origin(beast::string_view origin) {
  std::string o(origin);
  std::size_t const scheme = o.find("://");
  return scheme == std::string::npos ? std::string() : o.substr(scheme + 3);
}

// The type a downloaded file is sent as, by its extension.
const char* content_type_of(const std::string& name) {
  std::string const extension = std::filesystem::path(name).extension().string();
  if (extension == ".png") return "image/png";
  if (extension == ".h5") return "application/x-hdf5";
  return "application/octet-stream";
}

// The part of a download a Range header asks for (RFC 9110, 14.2), so that a download cut off (a dropped ssh tunnel,
// a laptop's sleep) goes on from where it stopped: one range, "bytes=FIRST-LAST", "bytes=FIRST-" or "bytes=-SUFFIX".
// Anything else (several ranges, another unit, a malformed header) is passed over, and the whole file sent, as the
// RFC lets a server answer; a range that holds no byte of the file is unsatisfiable (416).
struct ByteRange {
  std::uint64_t first = 0, length = 0;
  bool partial = false;        // 206, with Content-Range
  bool unsatisfiable = false;  // 416
};

ByteRange byte_range(std::string_view header, std::uint64_t size) {
  ByteRange const whole{0, size};
  std::string_view const unit = "bytes=";
  if (header.size() < unit.size() ||
      !beast::iequals(beast::string_view(header.data(), unit.size()), beast::string_view(unit.data(), unit.size())))
    return whole;
  std::string_view spec = header.substr(unit.size());
  while (!spec.empty() && (spec.front() == ' ' || spec.front() == '\t')) spec.remove_prefix(1);
  while (!spec.empty() && (spec.back() == ' ' || spec.back() == '\t')) spec.remove_suffix(1);
  std::size_t const dash = spec.find('-');
  if (dash == std::string_view::npos || spec.find(',') != std::string_view::npos) return whole;
  auto number = [](std::string_view text) -> std::optional<std::uint64_t> {
    if (text.empty() || text.size() > 18) return std::nullopt;  // 18 digits: no overflow, past any file
    std::uint64_t v = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + std::uint64_t(c - '0');
    }
    return v;
  };
  std::string_view const first_text = spec.substr(0, dash), last_text = spec.substr(dash + 1);
  if (first_text.empty()) {  // the last SUFFIX bytes
    auto const suffix = number(last_text);
    if (!suffix) return whole;
    if (size == 0) return whole;  // nothing to take the last bytes of: the (empty) file
    if (*suffix == 0) return {0, 0, false, true};
    std::uint64_t const length = std::min(*suffix, size);
    return {size - length, length, true, false};
  }
  auto const first = number(first_text);
  std::optional<std::uint64_t> last;
  if (!last_text.empty()) last = number(last_text);
  // A last byte past any file's size (more digits than a number holds): to the end.
  if (!last && last_text.size() > 18 && last_text.find_first_not_of("0123456789") == std::string_view::npos)
    last = std::numeric_limits<std::uint64_t>::max();
  if (!first || (!last_text.empty() && (!last || *last < *first))) return whole;
  if (*first >= size) return {0, 0, false, true};
  std::uint64_t const end = last ? std::min(*last, size - 1) : size - 1;
  return {*first, end - *first + 1, true, false};
}

// An HTTP-date (RFC 9110, 5.6.7: "Sun, 06 Nov 1994 08:49:37 GMT"), in English whatever the locale.
std::string http_date(std::time_t t) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[40];
  std::snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday % 7], tm.tm_mday,
                kMonths[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return text;
}

// A strong validator of a file as it is now (its size and modification time, `st` of the file sent): a resumed
// download's If-Range names the one its first part came with, and a file replaced since (another write under that
// name) is sent whole.
std::string entity_tag(const struct stat& st) {
  char tag[64];
  std::snprintf(tag, sizeof tag, "\"%llx-%llx\"", (unsigned long long)st.st_size,
                (unsigned long long)st.st_mtim.tv_sec * 1000000000ULL + (unsigned long long)st.st_mtim.tv_nsec);
  return tag;
}

// The headers every response has: no caching (frames, files and refusals are of the moment), no sniffing, the
// token kept out of other sites' logs, the page not framed by another site.
template <class Body>
void common_headers(http::response<Body>& response) {
  response.set(http::field::server, "nbody");
  response.set(http::field::date, http_date(std::time(nullptr)));
  response.set(http::field::cache_control, "no-store");
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Referrer-Policy", "no-referrer");
  response.set("X-Frame-Options", "DENY");
}

// Whether a Host header names this machine's loopback: "localhost", an IPv4 address of 127.0.0.0/8 or [::1] as
// address literals, each with a port or none. Names are matched whole: "127.0.0.1.evil.example" is a DNS name that
// another site can point at 127.0.0.1 (DNS rebinding), and its page would then steer.
bool loopback_host(const std::string& header) {
  std::string host = header;
  if (!host.empty() && host.front() == '[') {  // [::1]:port
    std::size_t const end = host.find(']');
    if (end == std::string::npos) return false;
    std::string const rest = host.substr(end + 1);
    if (!rest.empty() && (rest.front() != ':' || rest.size() == 1 ||
                          rest.find_first_not_of("0123456789", 1) != std::string::npos))
      return false;
    boost::system::error_code ec;
    auto const address = net::ip::make_address_v6(host.substr(1, end - 1), ec);
    return !ec && address.is_loopback();
  }
  if (std::size_t const colon = host.find(':'); colon != std::string::npos) {
    std::string const port = host.substr(colon + 1);
    if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) return false;
    host.resize(colon);
  }
  for (char& c : host) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (host == "localhost") return true;
  boost::system::error_code ec;
  auto const address = net::ip::make_address_v4(host, ec);  // dotted decimal only: no name
  return !ec && address.is_loopback();
}

}  // namespace

// How long control waits for the steering page to come back (a reload) before a watcher still there takes it.
constexpr int kReloadSeconds = 5;

struct WebServer::Impl {
  class Viewer;
  class Request;

  WebServer& owner;
  std::optional<std::string> token;
  std::string page;
  std::size_t downloads = 0;  // being sent (network thread only; before io, whose handlers hold its count)
  net::io_context io{1};
  tcp::acceptor acceptor{io};
  std::set<std::shared_ptr<Viewer>> viewers;  // network thread only
  std::weak_ptr<Viewer> steering;             // the viewer whose input counts
  std::string steering_tab;                   // its page's tab: a reload of that tab steers again
  // The steering viewer holds control only because it came first (or was there when the seat fell vacant), not
  // because it asked for it or steered before: a page that steered this server's run before it was started again
  // (its tab says so) takes control from it as the pages come back, whichever comes first.
  bool control_by_arrival = false;
  // Claims are honoured this long after the server starts: the pages of a server started again come back within
  // their reconnect back-off. Later (a tab that steered long ago, a reload after the vacant seat went to a watcher),
  // a page's memory of having steered is stale.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::milliseconds claim_window{60000};
  FrameBytes latest;                          // the newest frame, for a viewer that connects now
  std::deque<std::pair<std::string, std::string>> files;  // offered for download: name, path (network thread only)
  bool stopping = false;           // stop(): the viewers are told, no new ones come (network thread only)
  net::steady_timer goodbye{io};   // bounds the wait for their answers
  // The steering page gone: control is held for the page that comes next (a reload) this long, before a watcher
  // still there takes it (a reload handed it to a student's page, and the frames to its size).
  net::steady_timer vacant{io};

  Impl(WebServer& o, std::optional<std::string> t, std::string p) : owner(o), token(std::move(t)), page(std::move(p)) {}

  void accept();
  void add(const std::shared_ptr<Viewer>& v);
  void remove(const std::shared_ptr<Viewer>& v);
  void take_control(const std::shared_ptr<Viewer>& v);
  // Why a request is refused, and the status that says it.
  struct Refusal {
    http::status status;
    std::string why;
  };
  std::optional<Refusal> refusal(const http::request<http::empty_body>& req, bool upgrade) const;
  // The path of the file offered as `name` (a request's "/files/NAME"), or nothing.
  std::optional<std::string> offered(std::string_view name) const {
    for (auto const& [n, path] : files)
      if (n == name) return path;
    return std::nullopt;
  }
};

constexpr std::string_view kFilesPrefix = "/files/";

// One WebSocket viewer: reads input messages, writes frames and notices, one write at a time.
class WebServer::Impl::Viewer : public std::enable_shared_from_this<Viewer> {
 public:
  Viewer(Impl& server, beast::tcp_stream&& stream, std::string peer)
      : server_(server), ws_(std::move(stream)), peer_(std::move(peer)) {}

  const std::string& peer() const { return peer_; }
  const std::string& tab() const { return tab_; }
  bool steered_before() const { return steered_before_; }

  void start(http::request<http::empty_body> request) {
    // The page's tab (kept by the browser across reloads): the steering tab's reload steers again, however its
    // old connection's close and its new one's arrival are ordered. Anything but a tab id is no tab.
    if (auto given = query_value({request.target().data(), request.target().size()}, "tab"); given && tab_id(*given))
      tab_ = *given;
    // A page that steered when it last heard from a server at this address (the server started again since).
    steered_before_ = !tab_.empty() && query_value({request.target().data(), request.target().size()}, "steered") ==
                                           std::optional<std::string>("1");
    beast::get_lowest_layer(ws_).expires_never();  // the WebSocket's own timeouts from here on
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = kHandshakeTimeout;
    timeouts.idle_timeout = kIdleTimeout;
    timeouts.keep_alive_pings = true;
    ws_.set_option(timeouts);
    ws_.read_message_max(kMaxMessageBytes);
    ws_.auto_fragment(false);  // a frame is one WebSocket frame, not 4 KiB pieces
    ws_.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->server_.owner.note("serve: " + self->peer_ + ": WebSocket handshake failed: " + ec.message());
      self->server_.add(self);
      self->read();
    });
  }

  // A viewer the server has no room for: the handshake is completed only to close at once with 1013 ("try again
  // later") and why, which the page shows; a refused handshake would reach it as a bare 1006.
  void turn_away(http::request<http::empty_body> request, std::string why) {
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = kHandshakeTimeout;  // the accept's and the close's
    timeouts.idle_timeout = kHandshakeTimeout;
    ws_.set_option(timeouts);
    ws_.async_accept(request, [self = shared_from_this(), why = std::move(why)](beast::error_code ec) {
      if (ec) return self->close();
      self->ws_.async_close(websocket::close_reason(websocket::close_code::try_again_later, why),
                            [self](beast::error_code) { self->close(); });
    });
  }

  // The newest frame: sent now, or when the write in progress ends (replacing one still waiting).
  void offer(const FrameBytes& frame) {
    if (closed_ || leaving_) return;
    waiting_ = frame;
    if (!writing_) write_next();
  }

  // A text for the page, sent after those waiting. Past kMaxTextsWaiting (a page that reads too slowly) the oldest
  // waiting is dropped, never the newest. Whether the page steers ("control 0" or "control 1") is never dropped: a
  // newer one replaces the one waiting.
  void tell(std::string text) {
    if (closed_ || leaving_) return;
    bool const control = text.rfind("control ", 0) == 0;
    if (control)
      texts_.erase(std::remove_if(texts_.begin(), texts_.end(),
                                  [](const std::string& t) { return t.rfind("control ", 0) == 0; }),
                   texts_.end());
    while (texts_.size() >= kMaxTextsWaiting) {
      auto const other = std::find_if(texts_.begin(), texts_.end(),
                                      [](const std::string& t) { return t.rfind("control ", 0) != 0; });
      if (other == texts_.end()) break;
      texts_.erase(other);
    }
    texts_.push_back(std::move(text));
    if (!writing_) write_next();
  }

  // The server stops: a close frame, 1001 "going away", with `why`, which the page shows (a connection that just ends
  // reads there as 1006, "the server is not reachable"). Sent once the write in progress ends; the viewer's answer
  // ends its read, and with it the viewer (gone).
  void go_away(std::string why) {
    if (closed_ || leaving_) return;
    leaving_ = true;
    why_ = std::move(why);
    if (!writing_) write_next();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(ws_).close();
  }

 private:
  void read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      if (ec == websocket::error::message_too_big) {
        ++server_.owner.refused_messages_;
        server_.owner.note("serve: " + peer_ + ": refused a message over " + std::to_string(kMaxMessageBytes) +
                           " bytes; closed");
      } else if (ec == net::error::eof || ec == net::error::connection_reset || ec == net::error::not_connected ||
                 ec == net::error::broken_pipe) {
        // A tab closed or a browser quit without the WebSocket's goodbye: how pages usually leave, not a fault.
        server_.owner.note("serve: " + peer_ + ": left (the connection closed)");
      } else if (ec != websocket::error::closed && ec != net::error::operation_aborted) {
        server_.owner.note("serve: " + peer_ + ": left (" + ec.message() + ")");
      }
      return gone();
    }
    std::string const text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    if (!ws_.got_text()) {
      refuse("a binary message");
    } else {
      ParseResult const r = parse_client_message(text);
      if (!r.message) {
        refuse(r.error);
      } else if (std::holds_alternative<Acknowledge>(r.message->event)) {
        acknowledge(r.message->id);
      } else if (std::holds_alternative<TakeControl>(r.message->event)) {
        server_.take_control(shared_from_this());
        server_.control_by_arrival = false;
      } else if (server_.steering.lock() == shared_from_this()) {
        server_.owner.deliver(*r.message);
      }
    }
    if (refused_ > kMaxRefusedPerViewer) {
      server_.owner.note("serve: " + peer_ + ": closed after " + std::to_string(refused_) + " refused messages");
      return gone();
    }
    read();
  }

  // Frames up to `sequence` arrived: room for newer ones.
  void acknowledge(std::uint64_t sequence) {
    while (!in_flight_.empty() && in_flight_.front() <= sequence) in_flight_.pop_front();
    if (!writing_) write_next();
  }

  void refuse(const std::string& why) {
    ++refused_;
    ++server_.owner.refused_messages_;
    server_.owner.note("serve: " + peer_ + ": refused " + why);
  }

  void write_next() {
    if (closed_) return;
    if (leaving_) {
      writing_ = true;  // nothing is written after the close frame
      ws_.async_close(websocket::close_reason(websocket::close_code::going_away, why_),
                      [self = shared_from_this()](beast::error_code) { self->gone(); });
      return;
    }
    if (!texts_.empty()) {
      text_ = std::move(texts_.front());
      texts_.pop_front();
      ws_.text(true);
      writing_ = true;
      ws_.async_write(net::buffer(text_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
        self->on_write(ec);
      });
      return;
    }
    if (!waiting_ || in_flight_.size() >= kMaxFramesInFlight) return;  // an acknowledgement resumes
    sending_ = std::move(waiting_);
    in_flight_.push_back(sequence_of(*sending_));
    waiting_.reset();
    ws_.binary(true);
    writing_ = true;
    ws_.async_write(net::buffer(*sending_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->on_write(ec);
    });
  }

  void on_write(beast::error_code ec) {
    writing_ = false;
    sending_.reset();
    if (ec) return gone();
    write_next();
  }

  void gone() {
    close();
    server_.remove(shared_from_this());
  }

  Impl& server_;
  websocket::stream<beast::tcp_stream> ws_;
  std::string peer_;
  std::string tab_;  // the page's tab id, or "" (a page without one)
  bool steered_before_ = false;
  beast::flat_buffer buffer_;
  static std::uint64_t sequence_of(const std::vector<std::uint8_t>& frame) {
    auto const header = read_frame_header(frame.data(), frame.size());
    return header ? header->sequence : 0;
  }

  FrameBytes waiting_, sending_;  // at most one frame waits: a newer one replaces it
  std::deque<std::uint64_t> in_flight_;  // sequences sent and not acknowledged (at most kMaxFramesInFlight)
  std::deque<std::string> texts_;
  std::string text_;
  bool writing_ = false, closed_ = false;
  bool leaving_ = false;  // go_away: the close frame is sent (or waits for the write in progress)
  std::string why_;
  std::uint64_t refused_ = 0;
};

// One HTTP connection: requests read with a bounded header and time; "/" is the page, "/ws" becomes
// a Viewer.
class WebServer::Impl::Request : public std::enable_shared_from_this<Request> {
 public:
  Request(Impl& server, tcp::socket&& socket) : server_(server), stream_(std::move(socket)) {
    beast::error_code ec;
    auto const remote = stream_.socket().remote_endpoint(ec);
    peer_ = ec ? "?" : remote.address().to_string() + ":" + std::to_string(remote.port());
  }

  void read() {
    head_ = false;  // until the next request says it is a HEAD (a malformed one is answered with its body)
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(0);
    stream_.expires_after(kRequestTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    // A client that went away (its connection closed or reset: a link checker, a page closed as it loaded) asked
    // nothing wrong: no refusal to count or answer.
    if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset ||
        ec == net::error::connection_aborted || ec == net::error::eof || ec == net::error::broken_pipe)
      return close();
    if (ec == http::error::body_limit) {  // any body at all: nothing served takes one
      ++server_.owner.refused_requests_;
      auto const& header = parser_->get();
      bool const get = header.method() == http::verb::get || header.method() == http::verb::head;
      head_ = header.method() == http::verb::head;
      std::string_view const path = target_path({header.target().data(), header.target().size()});
      server_.owner.note("serve: " + peer_ + ": refused " + std::string(path.substr(0, 40)) + ": a request with a " +
                         "body (" + (get ? "a GET or HEAD takes none" : "only GET and HEAD are served") + ")");
      return respond(get ? http::status::bad_request : http::status::method_not_allowed,
                     get ? "a GET or HEAD takes no body\n" : "only GET and HEAD are served\n", "text/plain", false);
    }
    if (ec) {
      ++server_.owner.refused_requests_;
      server_.owner.note("serve: " + peer_ + ": refused a malformed or oversized request (" + ec.message() + ")");
      return respond(http::status::bad_request, "bad request\n", "text/plain", false);
    }
    http::request<http::empty_body> request = parser_->release();
    // HEAD (a link checker's, a download manager's look before it fetches) is answered as GET is, without the body.
    head_ = request.method() == http::verb::head;
    bool const upgrade = websocket::is_upgrade(request);
    // A browser's own look for an icon (after a refusal's text, which names none): not the user's request, so no
    // refusal is logged or counted; the answer tells nothing of the server.
    if (!upgrade && target_path({request.target().data(), request.target().size()}) == "/favicon.ico")
      return respond(http::status::not_found, "no icon\n", "text/plain", request.keep_alive());
    if (auto const refused = server_.refusal(request, upgrade)) {
      ++server_.owner.refused_requests_;
      // The path only: a query may hold the right token, which the log must not show.
      std::string_view const path = target_path({request.target().data(), request.target().size()});
      server_.owner.note("serve: " + peer_ + ": refused " + std::string(path.substr(0, 40)) + ": " + refused->why);
      return respond(refused->status, refused->why + "\n", "text/plain", false);
    }
    if (upgrade) {
      if (server_.viewers.size() >= kMaxClients) {
        server_.owner.note("serve: " + peer_ + ": refused: " + std::to_string(kMaxClients) + " viewers already");
        std::make_shared<Viewer>(server_, std::move(stream_), peer_)
            ->turn_away(std::move(request), std::to_string(kMaxClients) + " viewers already: close one, then reload");
        return;
      }
      std::make_shared<Viewer>(server_, std::move(stream_), peer_)->start(std::move(request));
      return;
    }
    std::string_view const path = target_path({request.target().data(), request.target().size()});
    if (path.substr(0, kFilesPrefix.size()) == kFilesPrefix) {
      std::string const name(path.substr(kFilesPrefix.size()));
      return send_file(name, *server_.offered(name), request);  // refusal() found it offered
    }
    respond(http::status::ok, server_.page, "text/html; charset=utf-8", request.keep_alive());
  }

  void respond(http::status status, const std::string& body, const char* type, bool keep_alive,
               const std::function<void(http::response<http::string_body>&)>& more_headers = {}) {
    auto response = std::make_shared<http::response<http::string_body>>(status, 11);
    common_headers(*response);
    response->set(http::field::content_type, type);
    if (more_headers) more_headers(*response);
    if (status == http::status::method_not_allowed) response->set(http::field::allow, "GET, HEAD");
    if (status == http::status::upgrade_required) {
      response->set(http::field::upgrade, "websocket");
      response->set(http::field::connection, "Upgrade");
    }
    response->body() = body;
    response->keep_alive(keep_alive);
    response->prepare_payload();
    if (head_) return respond_head(*response, body.size());
    stream_.expires_after(kRequestTimeout);
    http::async_write(stream_, *response, [self = shared_from_this(), response](beast::error_code ec, std::size_t) {
      if (ec || !response->keep_alive()) return self->close();
      self->read();
    });
  }

  // The answer to a HEAD: the headers the GET's would have, its Content-Length included, and no body.
  template <class Body>
  void respond_head(const http::response<Body>& like, std::uint64_t length) {
    auto response = std::make_shared<http::response<http::empty_body>>(like.result(), 11);
    for (auto const& field : like) response->set(field.name_string(), field.value());
    response->content_length(length);
    response->keep_alive(like.keep_alive());
    auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*response);
    serializer->split(true);
    stream_.expires_after(kRequestTimeout);
    http::async_write_header(stream_, *serializer,
                             [self = shared_from_this(), response, serializer](beast::error_code ec, std::size_t) {
                               if (ec || !response->keep_alive()) return self->close();
                               self->read();
                             });
  }

  // Counted while any part of a download is in flight: the slot goes with the last handler that holds it.
  struct Slot {
    std::size_t& count;
    explicit Slot(std::size_t& c) : count(c) { ++count; }
    ~Slot() { --count; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
  };
  // A download in flight: its file, read a part at a time into `buffer`, and the response that sends each part.
  struct Download {
    std::string name, part;  // part: ", bytes FIRST-LAST/SIZE" of a range, for the log
    beast::file file;
    std::uint64_t remaining = 0;
    std::vector<char> buffer = std::vector<char>(std::size_t(1) << 16);
    http::response<http::buffer_body> response;
    std::optional<http::response_serializer<http::buffer_body>> serializer;
    std::shared_ptr<Slot> slot;
    explicit Download(const net::any_io_executor& executor) : watchdog(executor) {}
    net::steady_timer watchdog;
    std::uint64_t written = 0, delivered = 0;  // bytes: to the socket; taken by the client (the last check's)
    std::chrono::steady_clock::time_point moved = std::chrono::steady_clock::now();  // when delivered last grew
    bool finished = false, stalled = false;
  };

  // A file offered for download, read from its path as it is sent (it may be large: a checkpoint): a part at a
  // time, each within kRequestTimeout, so that a download goes on as long as it moves and one that stalls is dropped.
  // A Range asks for one part of it (a download resumed: Accept-Ranges says it may), sent as 206 with Content-Range;
  // an If-Range that names another state of the file (replaced since the first part: its ETag, or its Last-Modified
  // date) gets the whole of this one.
  void send_file(const std::string& name, const std::string& path, const http::request<http::empty_body>& request) {
    bool const keep_alive = request.keep_alive();
    // A download holds a file open for as long as it moves, however slowly: a bound on how many at once keeps the
    // server's descriptors (and the viewers' connections) from running out; one more is told to try again. (A HEAD
    // reads nothing and holds no file open after its answer: not counted, nor refused.)
    if (!head_ && server_.downloads >= kMaxDownloads) {
      server_.owner.note("serve: " + peer_ + ": " + name + " refused: " + std::to_string(kMaxDownloads) +
                         " downloads already being sent");
      return respond(http::status::service_unavailable,
                     name + ": " + std::to_string(kMaxDownloads) +
                         " downloads are already being sent; try again when one has ended\n",
                     "text/plain", keep_alive);
    }
    auto download = std::make_shared<Download>(stream_.get_executor());
    download->name = name;
    beast::error_code ec;
    download->file.open(path.c_str(), beast::file_mode::scan, ec);
    std::uint64_t const size = ec ? 0 : download->file.size(ec);
    if (ec) {
      server_.owner.note("serve: " + peer_ + ": " + name + " asked for, and gone from " + path + " (" + ec.message() + ")");
      return respond(http::status::not_found, name + ": no longer in the server's folder (" + ec.message() + ")\n",
                     "text/plain", keep_alive);
    }
    // The file's size and modification time, once, for both validators: the ETag, and Last-Modified for a client that
    // resumes by date (its If-Range holds the date of the first part, which names this file only where it is this
    // one's and the file was not modified within that second: RFC 9110, 13.1.5, a date is a strong validator only a
    // second or more before the answer). Read from the file opened (fstat), which is the one sent.
    struct stat st{};
    bool const dated = ::fstat(download->file.native_handle(), &st) == 0 && std::uint64_t(st.st_size) == size;
    std::string const tag = dated ? entity_tag(st) : "\"" + std::to_string(size) + "\"";
    std::string const modified = dated ? http_date(st.st_mtime) : "";
    beast::string_view const if_range = request[http::field::if_range];
    bool const same_file = if_range.empty() || if_range == tag ||
                           (dated && if_range == modified && st.st_mtime + 1 < std::time(nullptr));
    beast::string_view const asked = request[http::field::range];
    ByteRange const range = same_file ? byte_range({asked.data(), asked.size()}, size) : ByteRange{0, size};
    std::string const total = "/" + std::to_string(size);
    if (range.unsatisfiable) {
      server_.owner.note("serve: " + peer_ + ": " + name + ": range " + std::string(asked.substr(0, 40)) +
                         " is past its " + std::to_string(size) + " bytes");
      return respond(http::status::range_not_satisfiable,
                     name + ": " + std::to_string(size) + " bytes, none in the range asked for\n", "text/plain",
                     keep_alive, [&](http::response<http::string_body>& r) {
                       r.set(http::field::content_range, "bytes */" + std::to_string(size));
                     });
    }
    if (range.partial) download->file.seek(range.first, ec);
    if (ec) {
      server_.owner.note("serve: " + peer_ + ": " + name + " could not be read (" + ec.message() + ")");
      return respond(http::status::internal_server_error, name + ": could not be read (" + ec.message() + ")\n",
                     "text/plain", keep_alive);
    }
    auto& response = download->response;
    response.result(range.partial ? http::status::partial_content : http::status::ok);
    response.version(11);
    common_headers(response);
    response.set(http::field::content_type, content_type_of(name));
    response.set(http::field::content_disposition, "attachment; filename=\"" + name + "\"");
    response.set(http::field::accept_ranges, "bytes");
    response.set(http::field::etag, tag);
    if (dated) response.set(http::field::last_modified, modified);
    if (range.partial) {
      std::string const span = std::to_string(range.first) + "-" + std::to_string(range.first + range.length - 1) + total;
      download->part = ", bytes " + span;
      response.set(http::field::content_range, "bytes " + span);
    }
    response.content_length(range.length);
    response.keep_alive(keep_alive);
    if (head_) return respond_head(response, range.length);  // the file closed with it, unread
    download->remaining = range.length;
    response.body().data = nullptr;
    response.body().more = true;
    download->serializer.emplace(response);
    download->slot = std::make_shared<Slot>(server_.downloads);
    // The writes wait as long as the client takes bytes; the watchdog drops one that takes none for kRequestTimeout.
    stream_.expires_never();
    watch(download);
    http::async_write_header(stream_, *download->serializer,
                             [self = shared_from_this(), download](beast::error_code error, std::size_t n) {
                               download->written += n;
                               if (error) return self->not_sent_whole(*download, error.message());
                               self->write_file_part(download, true);
                             });
  }

  // A download's progress is the bytes its client has taken: those written to the socket less those still in the
  // socket's send queue (SIOCOUTQ). A write's own timeout cannot tell: a send buffer of megabytes, drained at a few
  // KB/s by a congested tunnel, lets no write finish for minutes while the download moves. Checked every second;
  // none for kRequestTimeout drops it (a stalled client holds a download slot and an open file no longer).
  void watch(const std::shared_ptr<Download>& download) {
    download->watchdog.expires_after(std::chrono::seconds(1));
    download->watchdog.async_wait([self = shared_from_this(), download](beast::error_code ec) {
      if (ec || download->finished) return;
      int queued = 0;
      std::uint64_t delivered = download->written;
      if (::ioctl(self->stream_.socket().native_handle(), SIOCOUTQ, &queued) == 0 && queued > 0)
        delivered -= std::min<std::uint64_t>(delivered, std::uint64_t(queued));
      auto const now = std::chrono::steady_clock::now();
      if (delivered > download->delivered) {
        download->delivered = delivered;
        download->moved = now;
      } else if (now - download->moved >= kRequestTimeout) {
        download->stalled = true;
        return self->close();  // the write in flight ends with an error, and says the download was not sent whole
      }
      self->watch(download);
    });
  }

  // Sends what the socket takes of the part in hand (as long as the download moves: watch); `refill`: the part is
  // sent, the next one is read from the file first.
  void write_file_part(const std::shared_ptr<Download>& download, bool refill) {
    auto& body = download->response.body();
    if (refill && download->remaining > 0) {
      beast::error_code ec;
      std::size_t const want = std::size_t(std::min<std::uint64_t>(download->buffer.size(), download->remaining));
      std::size_t const got = download->file.read(download->buffer.data(), want, ec);
      if (ec || got == 0)  // cut short on disk while it was sent: the client sees fewer bytes than its length
        return not_sent_whole(*download, ec ? ec.message() : "the file was cut short while it was sent");
      download->remaining -= got;
      body.data = download->buffer.data();
      body.size = got;
      body.more = download->remaining > 0;
    } else if (refill) {
      body.data = nullptr;
      body.size = 0;
      body.more = false;
    }
    http::async_write_some(stream_, *download->serializer,
                           [self = shared_from_this(), download](beast::error_code ec, std::size_t n) {
                             download->written += n;
                             bool const sent = ec == http::error::need_buffer;  // the part in hand, whole
                             if (sent) ec = {};
                             if (ec) return self->not_sent_whole(*download, ec.message());
                             if (!download->serializer->is_done()) return self->write_file_part(download, sent);
                             download->finished = true;
                             download->watchdog.cancel();
                             self->server_.owner.note("serve: " + self->peer_ + ": sent " + download->name +
                                                      download->part);
                             if (!download->response.keep_alive()) return self->close();
                             self->read();
                           });
  }

  void not_sent_whole(Download& download, const std::string& why) {
    download.finished = true;
    download.watchdog.cancel();
    server_.owner.note("serve: " + peer_ + ": " + download.name + download.part + " not sent whole (" +
                       (download.stalled ? "its client took nothing for " + std::to_string(kRequestTimeout.count()) +
                                               " s"
                                         : why) +
                       ")");
    close();
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.close();
  }

  Impl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{kMaxHeaderBytes};
  std::optional<http::request_parser<http::empty_body>> parser_;
  std::string peer_;
  bool head_ = false;  // the request being answered is a HEAD: its answer has no body
};

void WebServer::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;
    if (!ec) std::make_shared<Request>(*this, std::move(socket))->read();
    accept();
  });
}

// Why a request is refused, or nothing. The token (when one is set) on every request; a GET or a HEAD only; a
// WebSocket only from a page of this server (its Origin names this host), so another site open in
// the same browser cannot steer; on a loopback bind, a Host that names the loopback (a DNS name
// rebound to 127.0.0.1 is another site's).
std::optional<WebServer::Impl::Refusal> WebServer::Impl::refusal(const http::request<http::empty_body>& req,
                                                                  bool upgrade) const {
  std::string_view const target(req.target().data(), req.target().size());
  auto forbidden = [](std::string why) { return Refusal{http::status::forbidden, std::move(why)}; };
  if (req.method() != http::verb::get && !(req.method() == http::verb::head && !upgrade))
    return Refusal{http::status::method_not_allowed, "only GET and HEAD are served"};
  if (token) {
    auto const given = query_value(target, "token");
    if (!given) return forbidden("no token (open the URL nbody printed at start)");
    if (!tokens_equal(*given, *token)) return forbidden("wrong token (open the URL nbody printed at start, token included: each start makes a new one)");
  }
  std::string const host(req[http::field::host]);
  if (owner.loopback_ && !loopback_host(host))
    return forbidden("Host '" + host.substr(0, 64) + "' is not this machine's loopback");
  std::string_view const path = target_path(target);
  if (upgrade) {
    if (path != "/ws") return Refusal{http::status::not_found, "unknown path"};
    auto const origin = req.find(http::field::origin);
    if (origin != req.end() && authority_of_origin(origin->value()) != host)
      return forbidden("a WebSocket from another site's page (Origin " + std::string(origin->value()).substr(0, 64) + ")");
    return std::nullopt;
  }
  if (path == "/ws") return Refusal{http::status::upgrade_required, "/ws is the page's WebSocket: a WebSocket is expected"};
  if (path.substr(0, kFilesPrefix.size()) == kFilesPrefix) {
    std::string_view const name = path.substr(kFilesPrefix.size());
    if (offered(name)) return std::nullopt;
    return Refusal{http::status::not_found, "no file '" + std::string(name.substr(0, 64)) +
                                                "' here: the server offers the screenshots and checkpoints its viewers' "
                                                "keys wrote (the newest " + std::to_string(kMaxFilesOffered) + ")"};
  }
  if (path != "/" && path != "/index.html") return Refusal{http::status::not_found, "unknown path"};
  return std::nullopt;
}

void WebServer::Impl::add(const std::shared_ptr<Viewer>& v) {
  if (stopping) return v->close();  // its handshake ended after the server began to stop
  viewers.insert(v);
  owner.viewers_ = viewers.size();
  owner.note("serve: viewer " + v->peer() + " connected (" + std::to_string(viewers.size()) + " connected)");
  // The first viewer steers, and the steering tab reloaded steers again (its old connection may not have closed yet);
  // so does the page that steered before the server was started again, over one that came back before it.
  bool const first = !steering.lock();
  if (first || (!v->tab().empty() && v->tab() == steering_tab)) {
    take_control(v);
    if (first) control_by_arrival = !v->steered_before();
  } else if (control_by_arrival && v->steered_before() &&
             std::chrono::steady_clock::now() - started < claim_window) {
    take_control(v);
    control_by_arrival = false;
  } else {
    v->tell("control 0");
  }
  if (!files.empty()) v->tell("file " + files.back().first);  // a page opened (or reloaded) since gets the newest
  if (latest) v->offer(latest);  // a still picture is not sent again: the newcomer needs one now
}

void WebServer::Impl::remove(const std::shared_ptr<Viewer>& v) {
  if (!viewers.erase(v)) return;
  owner.viewers_ = viewers.size();
  owner.note("serve: viewer " + v->peer() + " gone (" + std::to_string(viewers.size()) + " connected)");
  if (stopping) {
    if (viewers.empty()) goodbye.cancel();  // every viewer answered: the server stops now
    return;
  }
  if (steering.lock() == v || steering.expired()) {
    steering.reset();
    owner.deliver(ClientMessage{0, ControlChanged{}});
    // The page that comes next steers (add: a reloaded page, the steering one back); where none comes within
    // kReloadSeconds, someone still there does.
    vacant.expires_after(std::chrono::seconds(kReloadSeconds));
    vacant.async_wait([this](beast::error_code ec) {
      if (ec || stopping || steering.lock() || viewers.empty()) return;
      take_control(*viewers.begin());
      control_by_arrival = true;
    });
  }
}

void WebServer::Impl::take_control(const std::shared_ptr<Viewer>& v) {
  auto const previous = steering.lock();
  steering = v;
  steering_tab = v->tab();
  vacant.cancel();
  if (previous != v) owner.deliver(ClientMessage{0, ControlChanged{}});
  if (previous && previous != v) previous->tell("control 0");
  v->tell("control 1");
  if (previous != v) owner.note("serve: viewer " + v->peer() + " steers");
}

WebServer::WebServer(const ListenAddress& address, std::string token, std::string page,
                     std::function<void(const std::string&)> log)
    : log_(std::move(log)), impl_(std::make_unique<Impl>(*this, std::move(token), std::move(page))) {
  std::string const named = "--serve " + address.host + ":" + std::to_string(address.port);
  beast::error_code ec;
  tcp::resolver resolver(impl_->io);
  auto const endpoints = resolver.resolve(address.host, std::to_string(address.port),
                                          tcp::resolver::numeric_service | tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) throw InputError(named + ": cannot resolve the host (" + ec.message() + ")");
  tcp::endpoint const endpoint = endpoints.begin()->endpoint();
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw InputError(named + ": cannot listen there (" + ec.message() + ")");
  port_ = acceptor.local_endpoint().port();
  loopback_ = endpoint.address().is_loopback();
  every_interface_ = endpoint.address().is_unspecified();
  // A socket bound to :: takes IPv4 too unless it is IPv6 only (the host's net.ipv6.bindv6only, say).
  ipv4_ = endpoint.address().is_v4();
  if (endpoint.address().is_v6()) {
    net::ip::v6_only only(true);
    acceptor.get_option(only, ec);
    ipv4_ = !ec && !only.value();
  }
  bound_host_ = endpoint.address().to_string();
  if (loopback_) impl_->token.reset();
  impl_->accept();
  thread_ = std::thread([this] {
    for (;;) {
      try {
        impl_->io.run();
        return;
      } catch (const std::exception& e) {  // a handler's failure ends that connection, not the server
        note(std::string("serve: ") + e.what());
      }
    }
  });
}

WebServer::~WebServer() { stop("the server stopped"); }

void WebServer::stop(const std::string& reason) {
  if (!thread_.joinable()) return;
  // A close frame's reason holds at most 123 bytes (RFC 6455, 5.5): cut at a character's start, so it stays UTF-8.
  std::string why = reason.substr(0, 123);
  if (why.size() < reason.size())
    while (!why.empty() && (static_cast<unsigned char>(reason[why.size()]) & 0xC0) == 0x80) why.pop_back();
  net::post(impl_->io, [impl = impl_.get(), why] {
    beast::error_code ec;
    impl->acceptor.close(ec);
    impl->vacant.cancel();
    impl->stopping = true;
    // Every viewer is told why, and the network thread goes on until each has answered or kGoodbyeTimeout passed;
    // then whatever is left is closed as it is.
    for (auto const& v : std::vector<std::shared_ptr<Impl::Viewer>>(impl->viewers.begin(), impl->viewers.end()))
      v->go_away(why);
    impl->goodbye.expires_after(kGoodbyeTimeout);
    impl->goodbye.async_wait([impl](beast::error_code) {
      for (auto const& v : std::vector<std::shared_ptr<Impl::Viewer>>(impl->viewers.begin(), impl->viewers.end()))
        v->close();
      impl->viewers.clear();
      impl->io.stop();
    });
    if (impl->viewers.empty()) impl->goodbye.cancel();
  });
  thread_.join();
  {
    std::lock_guard<std::mutex> lock(input_mutex_);
    input_arrived_.notify_all();
  }
}

void WebServer::publish(FrameBytes frame) {
  net::post(impl_->io, [impl = impl_.get(), frame = std::move(frame)] {
    impl->latest = frame;
    for (auto const& v : impl->viewers) v->offer(frame);
  });
}

void WebServer::set_claim_window(std::chrono::milliseconds window) {
  net::post(impl_->io, [this, window] { impl_->claim_window = window; });
}

void WebServer::offer_file(const std::string& path) {
  std::string const name = std::filesystem::path(path).filename().string();
  net::post(impl_->io, [this, impl = impl_.get(), name, path] {
    auto& files = impl->files;
    for (auto k = files.begin(); k != files.end(); ++k)
      if (k->first == name) {
        files.erase(k);
        break;
      }
    files.emplace_back(name, path);
    if (files.size() > kMaxFilesOffered) files.pop_front();
    for (auto const& v : impl->viewers) v->tell("file " + name);
    note("serve: " + path + " offered to the viewers at " + std::string(kFilesPrefix) + name);
  });
}

void WebServer::deliver(ClientMessage message) {
  std::lock_guard<std::mutex> lock(input_mutex_);
  if (inputs_.size() >= kMaxPendingInputs) {
    // The render loop takes every input each frame; so many waiting means it is stuck, and the
    // newest input is the one to lose (the order of the rest stays whole).
    if (inputs_dropped_++ % 1000 == 0) note("serve: input arriving faster than frames; dropped " +
                                            std::to_string(inputs_dropped_) + " so far");
    return;
  }
  inputs_.push_back(std::move(message));
  input_arrived_.notify_one();
}

std::vector<ClientMessage> WebServer::take_inputs() {
  std::lock_guard<std::mutex> lock(input_mutex_);
  std::vector<ClientMessage> out(inputs_.begin(), inputs_.end());
  inputs_.clear();
  return out;
}

void WebServer::wait_input(double seconds) {
  std::unique_lock<std::mutex> lock(input_mutex_);
  input_arrived_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return !inputs_.empty(); });
}

void WebServer::bound_refusal_log(std::uint64_t lines, std::chrono::steady_clock::duration window) {
  std::lock_guard<std::mutex> lock(refusal_log_mutex_);
  refusal_lines_ = lines;
  refusal_window_ = window;
}

void WebServer::note(const std::string& text) {
  if (!log_) return;
  if (text.find(": refused") == std::string::npos) {
    log_(text);
    return;
  }
  // Refusals are logged, but a flood of them is not: at most refusal_lines_ a window (20 a minute). Past that they are
  // counted: said when the limit is reached, and their count with the first refusal of a later window (and in the
  // count at the end).
  std::string said_before;
  bool logged = false;
  {
    std::lock_guard<std::mutex> lock(refusal_log_mutex_);
    auto const now = std::chrono::steady_clock::now();
    if (now - refusal_window_start_ >= refusal_window_) {
      if (refusals_unlogged_ > 0)
        said_before = "serve: " + std::to_string(refusals_unlogged_) + " more refusal" +
                      (refusals_unlogged_ == 1 ? " was" : "s were") + " counted and not logged before this one";
      refusal_window_start_ = now;
      refusals_logged_ = refusals_unlogged_ = 0;
    }
    if (refusals_logged_ < refusal_lines_) {
      ++refusals_logged_;
      logged = true;
    } else {
      ++unlogged_refusals_;
      if (refusals_unlogged_++ == 0) {
        char window[32];
        std::snprintf(window, sizeof window, "%g s", std::chrono::duration<double>(refusal_window_).count());
        said_before = "serve: " + std::to_string(refusal_lines_) + " refusals logged within " + window +
                      "; more before those " + window + " are out are counted, not logged";
      }
    }
  }
  if (!said_before.empty()) log_(said_before);
  if (logged) log_(text);
}

}  // namespace nbody::app::serve
