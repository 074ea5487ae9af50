#include "server/session.h"

#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <cstdio>
#include <utility>

#include "server/guard.h"

namespace duet {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr size_t kWatchReadBytes = 4096;
constexpr size_t kMaxPipelinedBytes = 64 * 1024;  // stop reading ahead beyond this

// Header values come from handlers and from sanitised request ids; CR and LF would let a
// value start a header of its own, so they are dropped whatever their source.
std::string header_safe(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v)
    if (c != '\r' && c != '\n') out += c;
  return out;
}

std::string status_line(int status) {
  const auto reason = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
}

// Every 503 says when to come back, whoever answered it (a route, the connection limit).
void append_retry_after(int status, const std::vector<HttpHeader>& headers, std::string& head) {
  if (status != 503) return;
  for (const HttpHeader& h : headers)
    if (beast::iequals(h.name, "retry-after")) return;
  head += "Retry-After: 1\r\n";
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string chunk(std::string_view data) {
  char size[20];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size);
  out.append(data);
  out.append("\r\n");
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The Exchange handed to handlers.

class ExchangeImpl : public Exchange, public std::enable_shared_from_this<ExchangeImpl> {
 public:
  ExchangeImpl(std::shared_ptr<Session> session, HttpRequest request, std::string request_id,
               bool keep_alive)
      : session_(std::move(session)),
        executor_(session_->stream_.get_executor()),
        request_(std::move(request)),
        request_id_(std::move(request_id)),
        keep_alive_(keep_alive),
        head_only_(request_.method == "HEAD") {}

  const HttpRequest& request() const override { return request_; }
  const std::string& request_id() const override { return request_id_; }

  void add_default_header(HttpHeader header) override { defaults_.push_back(std::move(header)); }

  void respond(HttpResponse res) override {
    if (ended_ || streaming_) return;
    ended_ = true;
    const bool close = res.close || !keep_alive_ || session_->close_after_;
    if (!session_->broken_) {
      std::string head = status_line(res.status);
      head += "Content-Type: " + header_safe(res.content_type) + "\r\n";
      head += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
      append_retry_after(res.status, res.headers, head);
      append_common_headers(head, res.headers, close);
      head += "\r\n";
      if (!head_only_) head += res.body;
      session_->close_after_ = session_->close_after_ || close;
      session_->enqueue(std::move(head));
    }
    log_done(res.status);
    cancel_timers();
    session_->exchange_ended();
  }

  void begin_stream(int status, std::string content_type,
                    std::vector<HttpHeader> headers) override {
    if (ended_ || streaming_) return;
    streaming_ = true;
    status_ = status;
    // HTTP/1.0 has no chunked encoding: the body then ends when the connection closes.
    chunked_ = request_.version >= 11;
    const bool close = !keep_alive_ || !chunked_ || session_->close_after_;
    if (session_->broken_) return;
    std::string head = status_line(status);
    head += "Content-Type: " + header_safe(content_type) + "\r\n";
    if (chunked_) head += "Transfer-Encoding: chunked\r\n";
    append_retry_after(status, headers, head);
    append_common_headers(head, headers, close);
    head += "\r\n";
    session_->close_after_ = session_->close_after_ || close;
    session_->enqueue(std::move(head));
  }

  void send(std::string data) override {
    if (!streaming_ || ended_ || session_->broken_ || data.empty()) return;
    session_->enqueue(chunked_ ? chunk(data) : std::move(data));
  }

  void end_stream() override {
    if (!streaming_ || ended_) return;
    ended_ = true;
    if (!session_->broken_ && chunked_) session_->enqueue("0\r\n\r\n");
    log_done(status_);
    cancel_timers();
    session_->exchange_ended();
  }

  bool client_gone() const override { return session_->broken_; }

  void on_client_gone(std::function<void()> fn) override {
    if (session_->broken_) {
      if (fn) fn();
      return;
    }
    gone_ = std::move(fn);
  }

  void post(std::function<void()> fn) override {
    net::post(executor_, [self = shared_from_this(), fn = std::move(fn)] { fn(); });
  }

  void after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    auto timer = std::make_shared<net::steady_timer>(executor_, delay);
    if (ended_ || session_->broken_) return;
    std::erase_if(timers_, [](const std::weak_ptr<net::steady_timer>& w) { return w.expired(); });
    timers_.push_back(timer);
    timer->async_wait([self = shared_from_this(), timer, fn = std::move(fn)](beast::error_code ec) {
      if (!ec && !self->ended_) fn();
    });
  }

  // From the session, on the strand.
  void notify_gone() {
    cancel_timers();
    if (ended_) return;
    if (auto fn = std::move(gone_)) fn();
    gone_ = nullptr;
  }
  bool ended() const { return ended_; }

 private:
  // A pending timer holds this exchange (and its session) and keeps the I/O threads busy
  // until it fires; once the exchange is over it has nothing left to do.
  void cancel_timers() {
    for (auto& w : timers_)
      if (auto t = w.lock()) t->cancel();
    timers_.clear();
  }

  void append_common_headers(std::string& head, const std::vector<HttpHeader>& extra, bool close) {
    head += "X-Request-Id: " + header_safe(request_id_) + "\r\n";
    for (const HttpHeader& h : defaults_)
      head += header_safe(h.name) + ": " + header_safe(h.value) + "\r\n";
    for (const HttpHeader& h : extra)
      head += header_safe(h.name) + ": " + header_safe(h.value) + "\r\n";
    if (close)
      head += "Connection: close\r\n";
    else if (request_.version < 11)
      head += "Connection: keep-alive\r\n";
  }

  void log_done(int status) {
    const auto ms = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - started_)
                        .count() /
                    1000.0;
    char line[64];
    std::snprintf(line, sizeof line, " -> %d (%.1f ms)", status, ms);
    session_->shared_.log.info(request_id_, request_.method + " " + request_.path + line);
  }

  std::shared_ptr<Session> session_;
  net::any_io_executor executor_;
  HttpRequest request_;
  std::string request_id_;
  bool keep_alive_;
  bool head_only_;
  bool streaming_ = false;
  bool chunked_ = true;
  bool ended_ = false;
  int status_ = 200;
  std::function<void()> gone_;
  std::vector<HttpHeader> defaults_;
  std::vector<std::weak_ptr<net::steady_timer>> timers_;  // from after(), still pending
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// ---------------------------------------------------------------------------------------

Session::Session(tcp::socket socket, ServerShared& shared)
    : stream_(std::move(socket)), shared_(shared) {
  shared_.connections.fetch_add(1);
  beast::error_code ec;
  const auto ep = stream_.socket().remote_endpoint(ec);
  if (!ec) {
    auto addr = ep.address();
    // An IPv4 client on a dual-stack socket is the same client as on an IPv4 one.
    if (addr.is_v6() && addr.to_v6().is_v4_mapped())
      addr = addr.to_v6().to_v4();  // NOLINT: the v4-mapped form is checked above
    address_ = addr.to_string();
    remote_ = address_ + ":" + std::to_string(ep.port());
  }
  {
    std::lock_guard<std::mutex> lock(shared_.clients_mu);
    shared_.per_client[address_]++;
  }
  // Every token is its own small write; Nagle's algorithm would hold it back.
  stream_.socket().set_option(tcp::no_delay(true), ec);
}

Session::~Session() {
  shared_.connections.fetch_sub(1);
  if (probe_only_) shared_.probe_only.fetch_sub(1);
  std::lock_guard<std::mutex> lock(shared_.clients_mu);
  if (--shared_.per_client[address_] <= 0) shared_.per_client.erase(address_);
}

void Session::start(Admission admission) {
  if (admission == Admission::kRefuse) {
    fail_request(503, "too many open connections; try again later");
    return;
  }
  if (admission == Admission::kProbeOnly) {
    probe_only_ = true;
    shared_.probe_only.fetch_add(1);
  }
  read_request(true);
}

void Session::close_if_idle() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->idle_since() == 0 || self->current_ || self->parser_) return;
    self->shared_.log.info("-", "closed idle connection " + self->remote_ + " to make room");
    self->close_socket();
  });
}

void Session::shutdown_from_server() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->close_socket(); });
}

void Session::read_request(bool first) {
  if (broken_) return;
  if (buffer_.size() > 0) {
    read_header();
    return;
  }
  // Wait for the first byte of the next request under the idle deadline (a new connection
  // gets a short one: it has no reason to wait); the request deadline starts once it arrives.
  stream_.expires_after(
      first ? std::min(shared_.options.first_byte_timeout, shared_.options.read_timeout)
            : shared_.options.idle_timeout);
  idle_since_ns_.store(steady_ns(), std::memory_order_relaxed);
  stream_.async_read_some(buffer_.prepare(kWatchReadBytes),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            self->idle_since_ns_.store(0, std::memory_order_relaxed);
                            if (ec) {
                              self->close_socket();
                              return;
                            }
                            self->buffer_.commit(n);
                            self->read_header();
                          });
}

void Session::read_header() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(shared_.options.max_header_bytes));
  parser_->body_limit(shared_.options.max_body_bytes);
  path_.clear();
  // A connection admitted over a limit only gets to ask a probe, which is short.
  stream_.expires_after(
      probe_only_ ? std::min(shared_.options.first_byte_timeout, shared_.options.read_timeout)
                  : shared_.options.read_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

void Session::on_header(beast::error_code ec) {
  {
    // The path decides the dialect of an error answered from here (even a 413).
    const auto raw = parser_->get().target();
    auto target = parse_request_target(std::string_view(raw.data(), raw.size()));
    target_ = target ? std::move(target->origin_form) : std::string(raw.data(), raw.size());
    authority_ = target ? std::move(target->authority) : std::string();
    target_ok_ = target.has_value();
    path_ = target_.substr(0, target_.find('?'));
  }
  if (ec == http::error::header_limit) return fail_request(431, "request headers too large");
  if (ec == http::error::body_limit)
    return fail_request(413, "request body larger than " +
                                 std::to_string(shared_.options.max_body_bytes) + " bytes");
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::operation_aborted) {
    if (ec == beast::error::timeout) shared_.log.info("-", "closed slow client " + remote_);
    return close_socket();
  }
  if (ec) return fail_request(400, "malformed HTTP request");
  const auto& msg = parser_->get();
  size_t fields = 0;
  for (auto it = msg.begin(); it != msg.end(); ++it) ++fields;
  if (fields > shared_.options.max_header_fields)
    return fail_request(431, "too many request headers (at most " +
                                 std::to_string(shared_.options.max_header_fields) + ")");
  if (!check_framing()) return;  // answered
  if (probe_only_) {
    const bool probe = (msg.method() == http::verb::get || msg.method() == http::verb::head) &&
                       (path_ == "/health" || path_ == "/ready");
    if (!probe) return fail_request(503, "too many open connections; try again later");
    close_after_ = true;
  }
  if (parser_->is_done()) return dispatch();
  const auto expect = msg[http::field::expect];
  if (beast::iequals(expect, "100-continue")) enqueue("HTTP/1.1 100 Continue\r\n\r\n");
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
}

// RFC 9112's rules for a request's head that Beast leaves to its user. False when the request
// was refused (answered, and the connection is closing).
bool Session::check_framing() {
  const auto& msg = parser_->get();
  if (!target_ok_) {
    fail_request(400, "the request target must be a path or an absolute http(s) URL");
    return false;
  }
  // Exactly one Host in HTTP/1.1 (§3.2): with two, proxies and this server could disagree on
  // which one the request is for. An absolute-form target stands in for Host (§3.2.2).
  const size_t hosts = msg.count(http::field::host);
  if (hosts > 1) {
    fail_request(400, "more than one Host header");
    return false;
  }
  if (hosts == 0 && msg.version() >= 11 && authority_.empty()) {
    fail_request(400, "an HTTP/1.1 request needs a Host header");
    return false;
  }
  // Transfer-Encoding (§6.1): only "chunked" alone is read. Anything else would make this
  // server and a proxy in front of it see different bodies (request smuggling).
  std::vector<std::string_view> codings;
  for (auto [it, end] = msg.equal_range(http::field::transfer_encoding); it != end; ++it)
    codings.emplace_back(it->value().data(), it->value().size());
  const TransferEncodingVerdict te = check_transfer_encoding(codings);
  if (te != TransferEncodingVerdict::kNone && msg.version() < 11) {
    fail_request(400, "Transfer-Encoding is not allowed in HTTP/1.0");
    return false;
  }
  if (te == TransferEncodingVerdict::kBad) {
    fail_request(400, "Transfer-Encoding must end in chunked, given once");
    return false;
  }
  if (te == TransferEncodingVerdict::kNotImplemented) {
    fail_request(501, "transfer codings other than chunked are not implemented");
    return false;
  }
  if (te == TransferEncodingVerdict::kChunked && msg.count(http::field::content_length) > 0) {
    fail_request(400, "a request may not carry both Transfer-Encoding and Content-Length");
    return false;
  }
  return true;
}

void Session::on_body(beast::error_code ec) {
  if (ec == http::error::body_limit)
    return fail_request(413, "request body larger than " +
                                 std::to_string(shared_.options.max_body_bytes) + " bytes");
  if (ec == beast::error::timeout) {
    shared_.log.info("-", "closed slow client " + remote_);
    return close_socket();
  }
  if (ec == http::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::operation_aborted)
    return close_socket();
  if (ec) return fail_request(400, "malformed HTTP request body");
  dispatch();
}

void Session::fail_request(int status, const std::string& message) {
  parser_.reset();
  HttpResponse res = shared_.errors(path_, status, message);
  res.close = true;
  const std::string id = "conn-" + std::to_string(shared_.next_request.fetch_add(1));
  shared_.log.info(id, remote_ + ": " + std::to_string(status) + " " + message);
  std::string head = status_line(res.status);
  head += "Content-Type: " + header_safe(res.content_type) + "\r\n";
  head += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  append_retry_after(res.status, res.headers, head);
  for (const HttpHeader& h : res.headers)
    head += header_safe(h.name) + ": " + header_safe(h.value) + "\r\n";
  head += "Connection: close\r\n\r\n";
  head += res.body;
  close_after_ = true;
  enqueue(std::move(head));
}

void Session::dispatch() {
  stream_.expires_never();
  http::request<http::string_body> msg = parser_->release();
  parser_.reset();
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::move(target_);
  req.path = path_;
  req.version = static_cast<int>(msg.version());
  req.remote = remote_;
  // An absolute-form target's authority is the request's host, whatever Host says (§3.2.2).
  if (!authority_.empty()) req.headers.push_back({"Host", authority_});
  for (const auto& f : msg) {
    if (!authority_.empty() && f.name() == http::field::host) continue;
    req.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  }
  req.body = std::move(msg.body());
  std::string id;
  if (auto given = req.header("x-request-id")) id = sanitize_request_id(*given);
  if (id.empty()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "req-%08x-%llu", shared_.id_prefix,
                  static_cast<unsigned long long>(shared_.next_request.fetch_add(1)));
    id = buf;
  }
  current_ = std::make_shared<ExchangeImpl>(shared_from_this(), std::move(req), std::move(id),
                                            msg.keep_alive());
  auto exchange = current_;
  shared_.sink(exchange);
  if (!exchange->ended()) watch();
}

void Session::watch() {
  if (watching_ || broken_) return;
  watching_ = true;
  // Only the read timer: a write may be in flight with its own deadline.
  stream_.expires_never();
  // Up to kMaxPipelinedBytes of what the client sends next is kept, to be parsed after this
  // exchange. Past that the read goes on (a hang-up must still cancel the request) but what
  // it reads is dropped, and the connection closes after this exchange.
  const bool keep = buffer_.size() < kMaxPipelinedBytes;
  auto on_read = [self = shared_from_this(), keep](beast::error_code ec, size_t n) {
    self->on_watch(ec, n, keep);
  };
  if (keep)
    stream_.async_read_some(buffer_.prepare(kWatchReadBytes), std::move(on_read));
  else
    stream_.async_read_some(net::buffer(discard_), std::move(on_read));
}

void Session::on_watch(beast::error_code ec, size_t n, bool kept) {
  watching_ = false;
  if (!ec || (ec == net::error::operation_aborted && n > 0)) {
    if (kept)
      buffer_.commit(n);  // the start of a pipelined request: parsed after this exchange
    else
      close_after_ = true;  // bytes were dropped: what follows cannot be parsed
    if (current_ && !current_->ended())
      watch();
    else
      maybe_next();
    return;
  }
  if (ec == net::error::operation_aborted && !broken_) {
    maybe_next();  // we cancelled it because the exchange ended
    return;
  }
  client_gone();
}

void Session::client_gone() {
  if (broken_) return;
  broken_ = true;
  if (!writing_) out_.clear();  // an in-flight write still uses out_.front()
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
  if (current_) {
    auto ex = current_;
    ex->notify_gone();
    if (ex->ended()) current_.reset();
  }
}

void Session::enqueue(std::string data) {
  if (broken_) return;
  out_.push_back(std::move(data));
  if (writing_) return;
  writing_ = true;
  shared_.writes_in_flight.fetch_add(1);
  do_write();
}

// One write per queued item: a token's event leaves in its own write, never held back to be
// merged with the next one.
void Session::do_write() {
  stream_.expires_after(shared_.options.write_timeout);
  net::async_write(
      stream_, net::buffer(out_.front()),
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_write(ec); });
}

void Session::on_write(beast::error_code ec) {
  if (ec) {
    writing_ = false;
    shared_.writes_in_flight.fetch_sub(1);
    client_gone();
    out_.clear();
    return;
  }
  out_.pop_front();
  if (!out_.empty()) {
    do_write();
    return;
  }
  writing_ = false;
  shared_.writes_in_flight.fetch_sub(1);
  maybe_next();
}

void Session::exchange_ended() {
  if (broken_) {
    current_.reset();
    return;
  }
  maybe_next();
}

// Moves on once the exchange ended and everything it wrote is out: close, or read the
// next request on this connection.
void Session::maybe_next() {
  if (broken_ || lingering_ || writing_ || !out_.empty()) return;
  if (current_ && !current_->ended()) return;
  if (!current_ && parser_) return;  // still reading a request (after 100 Continue)
  if (watching_) {
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // on_watch comes back here
    return;
  }
  if (close_after_) {
    linger_close();
    return;
  }
  current_.reset();
  read_request(false);
}

// Closes after an answer the client may still be sending a body to (413, 431, ...): an
// immediate close() with unread bytes makes the kernel send RST, which can discard the
// answer before the client reads it. So: FIN first, then discard what still arrives for a
// moment, then close.
void Session::linger_close() {
  if (broken_ || lingering_) return;
  lingering_ = true;
  current_.reset();  // answered (maybe_next checked): the exchange is done with
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(std::chrono::seconds(2));
  drain_then_close(std::make_shared<std::array<char, 8192>>(), 0);
}

void Session::drain_then_close(std::shared_ptr<std::array<char, 8192>> scratch, size_t seen) {
  constexpr size_t kMaxDrainBytes = size_t{4} << 20;
  stream_.async_read_some(net::buffer(*scratch), [self = shared_from_this(), scratch, seen](
                                                     beast::error_code ec, size_t n) {
    if (ec || seen + n > kMaxDrainBytes) {
      self->close_socket();
      return;
    }
    self->drain_then_close(scratch, seen + n);
  });
}

void Session::close_socket() {
  if (broken_) return;
  broken_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.socket().close(ignored);
  if (current_) {
    auto ex = current_;
    ex->notify_gone();
    if (ex->ended()) current_.reset();
  }
}

}  // namespace duet
