// The HTTP side of the load generator (Boost.Beast over Asio, one connection per request as
// vLLM's and SGLang's clients do): a streaming POST whose body is read piece by piece as it
// arrives — every read is timestamped when it completes and its SSE events are handled before
// the next read — and a plain GET for /v1/models. All on one io_context thread; nothing here
// blocks, so a slow or dead server delays only its own requests, and every request ends by
// its deadline.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "loadgen/record.h"

namespace duet::loadgen {

using Clock = std::chrono::steady_clock;

// http://host[:port][/prefix]. The chat path is the prefix + /v1/chat/completions, unless
// the prefix already ends in /v1 or names the endpoint itself.
struct Target {
  std::string host;
  std::string port = "80";
  std::string chat_path;
  std::string models_path;
  std::string api_key;
};
Result<Target> parse_url(const std::string& url);

using Endpoints = boost::asio::ip::tcp::resolver::results_type;

// The message of an OpenAI-style error body ({"error": {"message": …}} or {"error": "…"}),
// else the body's first 200 bytes.
std::string error_message(const std::string& body);

// Sees each event's data as it arrives, before the record reads it (`duet run --url` shows the
// text from it).
using EventTap = std::function<void(const std::string& data)>;
// Ends a request early: closes its connection (the server then cancels the generation), and
// `done` gets the record with error_kind "cancelled". Safe to call from any thread, any number of
// times, and after the request has ended.
using CancelFn = std::function<void()>;

// Sends `body` to target.chat_path and reads the stream into `record`; `done` runs once, on
// the io_context, with the record (ok or with its error). `on_sent` runs when the connection
// attempt starts: that instant is the request's t = 0.
CancelFn start_stream_request(boost::asio::io_context& ioc, const Endpoints& endpoints,
                              const Target& target, std::string body, double timeout_s,
                              RequestRecord record, std::function<void(Clock::time_point)> on_sent,
                              std::function<void(RequestRecord&&)> done, EventTap tap = nullptr);

// GET `path`; `done` gets (status, body) or an error.
struct HttpReply {
  int status = 0;
  std::string body;
};
void start_get(boost::asio::io_context& ioc, const Endpoints& endpoints, const Target& target,
               const std::string& path, double timeout_s,
               std::function<void(Result<HttpReply>)> done);

}  // namespace duet::loadgen
