// Plain HTTP request/response values that handlers see. Boost.Beast stays inside the
// connection code (session.cc), so route handlers and their tests compile without it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet {

struct HttpHeader {
  std::string name;  // as the client spelled it
  std::string value;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path plus query
  std::string path;    // target without the query
  int version = 11;    // 10 or 11
  std::vector<HttpHeader> headers;
  std::string body;
  std::string remote;  // peer address, for logs

  // The first header with this name (case-insensitive), if any.
  std::optional<std::string_view> header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<HttpHeader> headers;  // extra headers (Retry-After, ...)
  bool close = false;               // close the connection after this response
};

// Case-insensitive ASCII comparison of header names.
bool iequals(std::string_view a, std::string_view b);

// One request/response exchange on a connection. A handler gets it and answers with
// respond(), or with begin_stream() / send() / end_stream() for a streamed body (HTTP/1.1
// chunked encoding: every send() is written to the socket at once as its own chunk).
// Every method but post() must be called on the connection's strand, which is where the
// handler itself runs; post() may be called from any thread.
class Exchange {
 public:
  virtual ~Exchange() = default;

  virtual const HttpRequest& request() const = 0;
  virtual const std::string& request_id() const = 0;

  // Headers added to whatever response this exchange gives (CORS, set by the front door).
  virtual void add_default_header(HttpHeader header) = 0;

  virtual void respond(HttpResponse response) = 0;

  virtual void begin_stream(int status, std::string content_type,
                            std::vector<HttpHeader> headers) = 0;
  virtual void send(std::string data) = 0;
  virtual void end_stream() = 0;

  // True once the client is gone (or the connection failed): further writes are dropped.
  virtual bool client_gone() const = 0;
  // Called once, on the strand, when the client goes away before the exchange ended.
  virtual void on_client_gone(std::function<void()> fn) = 0;

  // Runs fn on this connection's strand (safe from any thread; fn runs even if the client
  // has gone, so it can clean up).
  virtual void post(std::function<void()> fn) = 0;
  // Runs fn on the strand after `delay`, unless the exchange has ended by then.
  virtual void after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
};

using Handler = std::function<void(const std::shared_ptr<Exchange>&)>;

}  // namespace duet
