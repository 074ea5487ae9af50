// One client connection (internal to the server: only http_server.cc and session.cc see
// Beast). A session reads a request, hands it to the sink as an Exchange, writes what the
// exchange produces, and reads the next request on the same connection (keep-alive).
//
// While a handler is working (a generation that may run for minutes), the session keeps a
// read pending on the socket: it completes only when the client closes or resets the
// connection, which is how a client that went away is noticed at once, whatever the
// request's phase (queued, prefilling or decoding).
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/http_server.h"

namespace duet {

// What every session of one server shares.
struct ServerShared {
  HttpServerOptions options;
  RequestSink sink;
  ErrorFormatter errors;
  Logger& log;
  std::atomic<int> connections{0};
  std::atomic<int> probe_only{0};  // connections admitted over a limit, for /health and /ready
  std::mutex clients_mu{};
  std::unordered_map<std::string, int> per_client{};  // open connections by remote address
  std::atomic<uint64_t> next_request{1};
  std::atomic<int> writes_in_flight{0};
  uint32_t id_prefix = 0;  // random per process, so ids differ across restarts
};

class ExchangeImpl;

// How a new connection is let in (HttpServer decides from the counts).
enum class Admission {
  kServe,      // within the limits
  kProbeOnly,  // over a limit: one request, answered only if it is GET/HEAD /health or /ready
  kRefuse,     // over a limit with the probe reserve full: 503 at once
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket socket, ServerShared& shared);
  ~Session();
  void start(Admission admission);
  // Closes the socket (server shutdown); safe from any thread.
  void shutdown_from_server();
  // The remote address (no port), as counted in ServerShared::per_client.
  const std::string& address() const { return address_; }
  // Since when (steady-clock ns) the connection has been waiting for a request's first byte
  // with nothing in progress; 0 while it is busy. Any thread.
  int64_t idle_since() const { return idle_since_ns_.load(std::memory_order_relaxed); }
  // Closes the connection if it is still idle (to make room for a new one); any thread.
  void close_if_idle();

 private:
  friend class ExchangeImpl;
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  void read_request(bool first);
  void read_header();
  void on_header(boost::beast::error_code ec);
  void on_body(boost::beast::error_code ec);
  void fail_request(int status, const std::string& message);  // answer and close
  bool check_framing();
  void dispatch();

  void watch();
  void on_watch(boost::beast::error_code ec, size_t n, bool kept);
  void client_gone();

  void enqueue(std::string data);
  void do_write();
  void on_write(boost::beast::error_code ec);
  void exchange_ended();
  void maybe_next();
  void linger_close();
  void drain_then_close(std::shared_ptr<std::array<char, 8192>> scratch, size_t seen);
  void close_socket();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  ServerShared& shared_;
  std::string remote_;     // address:port, for the log
  std::string address_;    // address only
  std::string path_;       // of the request being read (for error dialects)
  std::string target_;     // its target in origin-form
  std::string authority_;  // from an absolute-form target, else empty
  bool target_ok_ = true;
  bool probe_only_ = false;
  std::atomic<int64_t> idle_since_ns_{0};
  std::array<char, 4096> discard_{};  // watched bytes past kMaxPipelinedBytes land here

  std::deque<std::string> out_;
  bool writing_ = false;
  bool close_after_ = false;  // close once the exchange ended and out_ drained
  bool watching_ = false;
  bool broken_ = false;     // the socket failed or was closed
  bool lingering_ = false;  // answered and closing: discarding what the client still sends
  std::shared_ptr<ExchangeImpl> current_;
};

}  // namespace duet
