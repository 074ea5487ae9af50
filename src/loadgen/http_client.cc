#include "loadgen/http_client.h"

#include <algorithm>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <limits>
#include <nlohmann/json.hpp>

#include "loadgen/chat_stream.h"
#include "loadgen/sse_parser.h"

namespace duet::loadgen {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using beast::error_code;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::string error_message(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return body.substr(0, 200);
}

namespace {

void prepare(http::request<http::string_body>& req, const Target& t, http::verb verb,
             const std::string& path) {
  req.method(verb);
  req.target(path);
  req.version(11);
  req.set(http::field::host, t.host + ":" + t.port);
  req.set(http::field::user_agent, "duet-bench-serve");
  if (!t.api_key.empty()) req.set(http::field::authorization, "Bearer " + t.api_key);
}

class StreamCall : public std::enable_shared_from_this<StreamCall> {
 public:
  StreamCall(net::io_context& ioc, const Endpoints& eps, const Target& target, std::string body,
             double timeout_s, RequestRecord record, std::function<void(Clock::time_point)> on_sent,
             std::function<void(RequestRecord&&)> done, EventTap tap)
      : stream_(ioc),
        eps_(eps),
        timeout_(
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s))),
        record_(std::move(record)),
        reader_(record_),
        sse_([this](const std::string& data) { on_event(data); }),
        on_sent_(std::move(on_sent)),
        done_(std::move(done)),
        tap_(std::move(tap)) {
    prepare(req_, target, http::verb::post, target.chat_path);
    req_.set(http::field::content_type, "application/json");
    req_.set(http::field::accept, "text/event-stream");
    req_.body() = std::move(body);
    req_.prepare_payload();
    parser_.body_limit(std::numeric_limits<std::uint64_t>::max());  // a stream has no end size
  }

  void start() {
    start_ = Clock::now();
    deadline_ = start_ + timeout_;
    on_sent_(start_);
    arm();
    stream_.async_connect(eps_, [self = shared_from_this()](error_code ec, const tcp::endpoint&) {
      self->on_connect(ec);
    });
  }

 private:
  // Every operation gets what is left of the request's deadline.
  void arm() { stream_.expires_after(std::max(Clock::duration::zero(), deadline_ - Clock::now())); }

  double now_s() const { return seconds(Clock::now() - start_); }

  void on_connect(error_code ec) {
    if (ec) return fail_io("connect", ec);
    stream_.socket().set_option(tcp::no_delay(true), ec);
    arm();
    http::async_write(stream_, req_, [self = shared_from_this()](error_code ec, size_t) {
      if (ec) return self->fail_io("write", ec);
      self->arm();
      http::async_read_header(self->stream_, self->buf_, self->parser_,
                              [self](error_code ec, size_t) { self->on_header(ec); });
    });
  }

  void on_header(error_code ec) {
    if (ec) return fail_io("read", ec);
    record_.http_status = static_cast<int>(parser_.get().result_int());
    // A response without a body (Content-Length: 0) is complete already; reading on would
    // wait for bytes that never come.
    if (record_.http_status != 200)
      return parser_.is_done()
                 ? fail("http", "HTTP " + std::to_string(record_.http_status) + " (no body)")
                 : read_error_body();
    const auto type = parser_.get()[http::field::content_type];
    if (type.find("text/event-stream") == beast::string_view::npos)
      return fail("not_streaming", "the server answered with Content-Type '" + std::string(type) +
                                       "', not an event stream");
    if (parser_.is_done()) return end_stream(now_s());
    read_body();
  }

  void read_body() {
    parser_.get().body().data = piece_;
    parser_.get().body().size = sizeof piece_;
    arm();
    http::async_read_some(
        stream_, buf_, parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->on_body(ec); });
  }

  void on_body(error_code ec) {
    // The arrival time of everything this read brought: taken before any parsing.
    const double t = now_s();
    if (ec == http::error::need_buffer) ec = {};
    const size_t n = sizeof piece_ - parser_.get().body().size;
    now_ = t;
    if (n > 0 && !sse_.feed(std::string_view(piece_, n)))
      return fail("malformed_sse", "an event or line exceeds the size limit");
    if (finished_) return;  // a broken event ended the request
    if (reader_.done() || parser_.is_done()) return end_stream(t);
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec == net::error::eof)
      return end_stream(t);
    if (ec) return fail_io("read", ec);
    read_body();
  }

  void on_event(const std::string& data) {
    if (finished_) return;
    if (tap_) tap_(data);
    if (!reader_.on_event(data, now_)) finish();
  }

 public:
  void cancel() { fail("cancelled", "cancelled by the client"); }

 private:
  void end_stream(double t) {
    if (sse_.has_partial_event() && !reader_.done())
      return fail("incomplete_stream", "the stream ended inside an event");
    reader_.finish(t);
    finish();
  }

  void read_error_body() {
    parser_.get().body().data = piece_;
    parser_.get().body().size = sizeof piece_;
    arm();
    http::async_read_some(
        stream_, buf_, parser_, [self = shared_from_this()](error_code ec, size_t) {
          if (ec == http::error::need_buffer) ec = {};
          const size_t n = sizeof self->piece_ - self->parser_.get().body().size;
          self->error_body_.append(
              self->piece_, std::min(n, 4096 - std::min<size_t>(4096, self->error_body_.size())));
          if (!ec && !self->parser_.is_done() && self->error_body_.size() < 4096)
            return self->read_error_body();
          self->fail("http", "HTTP " + std::to_string(self->record_.http_status) + ": " +
                                 error_message(self->error_body_));
        });
  }

  void fail_io(const char* stage, error_code ec) {
    if (ec == beast::error::timeout)
      return fail("timeout", std::string("no complete answer within the timeout (") + stage + ")");
    fail(std::string(stage) == "connect" ? "connect" : "io",
         std::string(stage) + ": " + ec.message());
  }

  void fail(const std::string& kind, std::string message) {
    if (finished_) return;
    record_.ok = false;
    record_.error_kind = kind;
    record_.error = std::move(message);
    record_.e2e = now_s();
    finish();
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    done_(std::move(record_));
  }

  beast::tcp_stream stream_;
  Endpoints eps_;
  Clock::duration timeout_;
  RequestRecord record_;
  ChatStreamReader reader_;
  SseParser sse_;
  std::function<void(Clock::time_point)> on_sent_;
  std::function<void(RequestRecord&&)> done_;
  EventTap tap_;
  http::request<http::string_body> req_;
  http::response_parser<http::buffer_body> parser_;
  beast::flat_buffer buf_;
  char piece_[16384];
  std::string error_body_;
  Clock::time_point start_, deadline_;
  double now_ = 0;
  bool finished_ = false;
};

class GetCall : public std::enable_shared_from_this<GetCall> {
 public:
  GetCall(net::io_context& ioc, const Endpoints& eps, const Target& target, const std::string& path,
          double timeout_s, std::function<void(Result<HttpReply>)> done)
      : stream_(ioc), eps_(eps), timeout_s_(timeout_s), done_(std::move(done)) {
    prepare(req_, target, http::verb::get, path);
    parser_.body_limit(8u << 20);
  }
  void start() {
    stream_.expires_after(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_)));
    stream_.async_connect(eps_, [self = shared_from_this()](error_code ec, const tcp::endpoint&) {
      if (ec) return self->finish(ec);
      http::async_write(self->stream_, self->req_, [self](error_code ec, size_t) {
        if (ec) return self->finish(ec);
        http::async_read(self->stream_, self->buf_, self->parser_,
                         [self](error_code ec, size_t) { self->finish(ec); });
      });
    });
  }

 private:
  void finish(error_code ec) {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    if (ec == beast::error::timeout) return done_(Status::error("no answer within the timeout"));
    if (ec) return done_(Status::error(ec.message()));
    done_(HttpReply{static_cast<int>(parser_.get().result_int()), parser_.get().body()});
  }

  beast::tcp_stream stream_;
  Endpoints eps_;
  double timeout_s_;
  std::function<void(Result<HttpReply>)> done_;
  http::request<http::string_body> req_;
  http::response_parser<http::string_body> parser_;
  beast::flat_buffer buf_;
};

}  // namespace

Result<Target> parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind("https://", 0) == 0)
    return Status::error("https is not supported: point --url at the server's plain-HTTP port");
  if (url.rfind(scheme, 0) != 0)
    return Status::error("--url must start with http://, got '" + url + "'");
  std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  Target t;
  if (!authority.empty() && authority[0] == '[') {  // [v6]:port
    const size_t close = authority.find(']');
    if (close == std::string::npos) return Status::error("bad IPv6 address in --url");
    t.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return Status::error("bad port in --url");
      t.port = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.rfind(':');
    t.host = authority.substr(0, colon);
    if (colon != std::string::npos) t.port = authority.substr(colon + 1);
  }
  if (t.host.empty()) return Status::error("--url has no host");
  if (t.port.empty() || t.port.size() > 5 ||
      t.port.find_first_not_of("0123456789") != std::string::npos || std::stoi(t.port) < 1 ||
      std::stoi(t.port) > 65535)
    return Status::error("--url has a bad port '" + t.port + "'");
  const auto ends_with = [&](const std::string& s) {
    return prefix.size() >= s.size() && prefix.compare(prefix.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with("/chat/completions")) {
    t.chat_path = prefix;
    t.models_path =
        prefix.substr(0, prefix.size() - std::string("/chat/completions").size()) + "/models";
  } else if (ends_with("/v1")) {
    t.chat_path = prefix + "/chat/completions";
    t.models_path = prefix + "/models";
  } else {
    t.chat_path = prefix + "/v1/chat/completions";
    t.models_path = prefix + "/v1/models";
  }
  return t;
}

CancelFn start_stream_request(net::io_context& ioc, const Endpoints& endpoints,
                              const Target& target, std::string body, double timeout_s,
                              RequestRecord record, std::function<void(Clock::time_point)> on_sent,
                              std::function<void(RequestRecord&&)> done, EventTap tap) {
  auto call = std::make_shared<StreamCall>(ioc, endpoints, target, std::move(body), timeout_s,
                                           std::move(record), std::move(on_sent), std::move(done),
                                           std::move(tap));
  call->start();
  // The call's state belongs to the io_context's thread: the cancel runs there.
  return [&ioc, weak = std::weak_ptr<StreamCall>(call)] {
    net::post(ioc, [weak] {
      if (auto c = weak.lock()) c->cancel();
    });
  };
}

void start_get(net::io_context& ioc, const Endpoints& endpoints, const Target& target,
               const std::string& path, double timeout_s,
               std::function<void(Result<HttpReply>)> done) {
  std::make_shared<GetCall>(ioc, endpoints, target, path, timeout_s, std::move(done))->start();
}

}  // namespace duet::loadgen
