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
#include <optional>
#include <string>

#include "server/http_server.h"

namespace duet {

// What every session of one server shares.
struct ServerShared {
  HttpServerOptions options;
  RequestSink sink;
  ErrorFormatter errors;
  Logger& log;
  std::atomic<int> connections{0};
  std::atomic<uint64_t> next_request{1};
  std::atomic<int> writes_in_flight{0};
  uint32_t id_prefix = 0;  // random per process, so ids differ across restarts
};

class ExchangeImpl;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket socket, ServerShared& shared);
  ~Session();
  // over_limit: too many connections; answer 503 and close.
  void start(bool over_limit);
  // Closes the socket (server shutdown); safe from any thread.
  void shutdown_from_server();

 private:
  friend class ExchangeImpl;
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  void read_request(bool first);
  void read_header();
  void on_header(boost::beast::error_code ec);
  void on_body(boost::beast::error_code ec);
  void fail_request(int status, const std::string& message);  // answer and close
  void dispatch();

  void watch();
  void on_watch(boost::beast::error_code ec, size_t n);
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
  std::string remote_;
  std::string path_;  // of the request being read (for error dialects)

  std::deque<std::string> out_;
  bool writing_ = false;
  bool close_after_ = false;  // close once the exchange ended and out_ drained
  bool watching_ = false;
  bool broken_ = false;     // the socket failed or was closed
  bool lingering_ = false;  // answered and closing: discarding what the client still sends
  std::shared_ptr<ExchangeImpl> current_;
};

}  // namespace duet
