// The HTTP/1.1 listener: Boost.Asio I/O threads, one strand per connection, keep-alive,
// and the limits a public port needs, all enforced before a body is parsed:
//   - header bytes and header count (431), body size (413, from Content-Length before the
//     body is read, or while a chunked body streams in),
//   - a deadline for reading a whole request (slow clients are closed), an idle deadline
//     between keep-alive requests, a deadline per write,
//   - a cap on open connections and on those of one client address; past either, an idle
//     connection is closed to make room, and a connection that still does not fit may ask
//     only /health or /ready (every other request gets 503 with Retry-After),
//   - a short deadline for a new connection's first byte, TCP_NODELAY on every socket.
// Requests that pass are handed to the RequestSink on the connection's strand.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/log.h"
#include "base/status.h"
#include "server/http_types.h"

namespace duet {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port (see HttpServer::port())
  int io_threads = 2;
  size_t max_body_bytes = size_t{8} << 20;
  size_t max_header_bytes = size_t{16} << 10;
  size_t max_header_fields = 100;
  std::chrono::milliseconds first_byte_timeout{5000};  // connect to a new connection's first byte
  std::chrono::milliseconds read_timeout{30000};       // first byte to last byte of a request
  std::chrono::milliseconds idle_timeout{75000};       // keep-alive wait for the next request
  std::chrono::milliseconds write_timeout{60000};      // one write to a client that stopped reading
  int max_connections = 512;
  int max_connections_per_client = 256;  // per remote address; 0: no limit of its own
};

// Answers a request that passed the HTTP-level checks (runs on the connection's strand).
using RequestSink = std::function<void(const std::shared_ptr<Exchange>&)>;
// Builds the body of an error the connection layer answers itself (400 malformed HTTP,
// 413, 431, 503 too many connections), in the dialect of `path` ("" when unknown).
using ErrorFormatter =
    std::function<HttpResponse(std::string_view path, int status, const std::string& message)>;

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, RequestSink sink, ErrorFormatter errors, Logger& log);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the I/O threads.
  Status start();
  // The port actually bound (differs from options.port when that was 0).
  uint16_t port() const;
  // Calls fn(signal) on an I/O thread for SIGINT and SIGTERM (each time one arrives).
  void on_signal(std::function<void(int)> fn);
  // Stops accepting, closes every connection and joins the I/O threads.
  void stop();
  int open_connections() const;
  // Writes handed to sockets and not yet completed (for a drain to let them finish).
  int writes_in_flight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace duet
