#include "cli/run/remote_chat.h"

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <map>

namespace duet::cli {
namespace {

namespace net = boost::asio;
using loadgen::HttpReply;

// Runs `ioc` until `done` is set. Every request here has its own deadline, so this ends.
void run_until(net::io_context& ioc, const bool& done) {
  ioc.restart();
  while (!done) ioc.run_one_for(std::chrono::milliseconds(50));
}

Result<HttpReply> get(net::io_context& ioc, const loadgen::Endpoints& endpoints,
                      const loadgen::Target& target, const std::string& path, double timeout_s) {
  bool done = false;
  Result<HttpReply> reply = Status::error("no answer");
  loadgen::start_get(ioc, endpoints, target, path, timeout_s, [&](Result<HttpReply> r) {
    reply = std::move(r);
    done = true;
  });
  run_until(ioc, done);
  return reply;
}

Result<loadgen::Endpoints> resolve(net::io_context& ioc, const loadgen::Target& target) {
  boost::system::error_code ec;
  net::ip::tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(target.host, target.port, ec);
  if (ec) return Status::error("cannot resolve " + target.host + ": " + ec.message());
  return endpoints;
}

std::string string_field(const Json& obj, const char* key) {
  const Json* v = find_field(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// Reads the text of each stream event into the sink as it arrives; tool calls are shown once
// their arguments are complete (at the end of the stream).
class StreamShow {
 public:
  explicit StreamShow(ReplySink& sink) : sink_(sink) {}

  void on_event(const std::string& data) {
    if (data == "[DONE]") return;
    const Json j = Json::parse(data, nullptr, false);
    if (!j.is_object()) return;
    if (const Json* duet = find_field(j, "duet"); duet != nullptr && duet->is_object()) {
      if (const Json* t = find_field(*duet, "thinking"); t != nullptr && t->is_boolean())
        thinking_ = t->get<bool>();
    }
    const Json* choices = find_field(j, "choices");
    if (choices == nullptr || !choices->is_array() || choices->empty()) return;
    const Json* delta = find_field((*choices)[0], "delta");
    if (delta == nullptr || !delta->is_object()) return;
    // reasoning_content (duet, llama.cpp) or reasoning (vLLM's newer name): the same text
    // when both are sent.
    std::string reasoning = string_field(*delta, "reasoning_content");
    if (reasoning.empty()) reasoning = string_field(*delta, "reasoning");
    if (!reasoning.empty()) {
      saw_reasoning_ = true;
      sink_.reasoning(reasoning);
    }
    const std::string content = string_field(*delta, "content");
    if (!content.empty()) {
      answer_ += content;
      sink_.content(content);
    }
    if (const Json* calls = find_field(*delta, "tool_calls"); calls != nullptr && calls->is_array())
      for (const Json& call : *calls) {
        const Json* index = find_field(call, "index");
        Call& c = calls_[index != nullptr && index->is_number_integer() ? index->get<int>() : 0];
        if (const Json* fn = find_field(call, "function"); fn != nullptr && fn->is_object()) {
          c.name += string_field(*fn, "name");
          c.arguments += string_field(*fn, "arguments");
        }
      }
  }

  // Shows the tool calls; returns whether there were any.
  bool finish() {
    for (const auto& [index, call] : calls_) sink_.tool_call(call.name, call.arguments);
    return !calls_.empty();
  }
  const std::string& answer() const { return answer_; }
  // The mode the server reports (duet), else whether any reasoning came.
  bool thinking() const { return thinking_.value_or(saw_reasoning_); }

 private:
  struct Call {
    std::string name, arguments;
  };
  ReplySink& sink_;
  std::string answer_;
  std::map<int, Call> calls_;
  std::optional<bool> thinking_;
  bool saw_reasoning_ = false;
};

}  // namespace

Result<std::unique_ptr<RemoteChat>> RemoteChat::connect(const std::string& url,
                                                        const std::string& api_key) {
  auto target = loadgen::parse_url(url);
  if (!target) return target.status();
  std::unique_ptr<RemoteChat> chat(new RemoteChat());
  chat->target_ = *target;
  chat->target_.api_key = api_key;
  auto endpoints = resolve(chat->ioc_, chat->target_);
  if (!endpoints) return endpoints.status();
  chat->endpoints_ = *endpoints;
  auto reply = get(chat->ioc_, chat->endpoints_, chat->target_, chat->target_.models_path, 10);
  if (!reply) return Status::error("no server answers at " + url + ": " + reply.message());
  if (reply->status == 401 || reply->status == 403)
    return Status::error(
        "the server at " + url + " refused " +
        (api_key.empty() ? "a request without an API key" : std::string("the API key")) +
        " (HTTP " + std::to_string(reply->status) + "): give it with --api-key or DUET_API_KEY");
  if (reply->status != 200)
    return Status::error("the server at " + url + " answered " + chat->target_.models_path +
                         " with HTTP " + std::to_string(reply->status) + ": " +
                         loadgen::error_message(reply->body));
  const Json models = Json::parse(reply->body, nullptr, false);
  const Json* data = models.is_object() ? find_field(models, "data") : nullptr;
  if (data != nullptr && data->is_array())
    for (const Json& m : *data)
      if (std::string id = string_field(m, "id"); !id.empty()) chat->models_.push_back(id);
  if (chat->models_.empty())
    return Status::error("the server at " + url + " lists no models at " +
                         chat->target_.models_path);
  return chat;
}

ReplyOutcome RemoteChat::reply(const Json& body, ReplySink& sink,
                               const std::atomic<bool>& interrupted, bool /*keep_all*/) {
  Json request = body;
  request["stream"] = true;
  request["stream_options"] = {{"include_usage", true}};
  StreamShow show(sink);
  bool done = false;
  loadgen::RequestRecord record;
  // A reply may take many minutes on a slow machine; Ctrl-C is the way to end one early.
  constexpr double kNoDeadline = 7 * 24 * 3600.0;
  loadgen::CancelFn cancel = loadgen::start_stream_request(
      ioc_, endpoints_, target_, request.dump(-1, ' ', false, Json::error_handler_t::replace),
      kNoDeadline, {}, [](loadgen::Clock::time_point) {},
      [&](loadgen::RequestRecord&& r) {
        record = std::move(r);
        done = true;
      },
      [&](const std::string& data) { show.on_event(data); });
  ioc_.restart();
  bool cancelled = false;
  while (!done) {
    ioc_.run_one_for(std::chrono::milliseconds(50));
    if (interrupted.load() && !cancelled) {
      cancel();
      cancelled = true;
    }
  }

  ReplyOutcome out;
  const bool called_tool = show.finish();
  out.answer = show.answer();
  out.thinking = show.thinking();
  out.tokens = record.usage_completion >= 0 ? record.usage_completion
                                            : static_cast<int64_t>(record.tokens.size());
  if (!record.tokens.empty()) {
    const double first = record.tokens.front().t;
    out.first_token_ms = first * 1e3;
    const double decode_s = record.e2e - first;
    if (out.tokens > 1 && decode_s > 0) out.tokens_per_s = (out.tokens - 1) / decode_s;
  }
  if (record.error_kind == "cancelled") {
    out.end = ReplyOutcome::End::kInterrupted;
  } else if (!record.ok) {
    out.end = record.http_status == 400 && is_context_overflow(record.error)
                  ? ReplyOutcome::End::kTooLong
                  : ReplyOutcome::End::kError;
    out.error = record.error;
  } else if (record.finish_reason == "length") {
    out.end = ReplyOutcome::End::kLength;
  } else {
    out.end = called_tool ? ReplyOutcome::End::kToolCalls : ReplyOutcome::End::kStop;
  }
  return out;
}

std::optional<std::string> probe_duet_server(const std::string& url) {
  auto target = loadgen::parse_url(url);
  if (!target) return std::nullopt;
  net::io_context ioc;
  auto endpoints = resolve(ioc, *target);
  if (!endpoints) return std::nullopt;
  auto reply = get(ioc, *endpoints, *target, target->models_path, 0.3);
  if (!reply || reply->status != 200) return std::nullopt;
  const Json models = Json::parse(reply->body, nullptr, false);
  const Json* data = models.is_object() ? find_field(models, "data") : nullptr;
  if (data == nullptr || !data->is_array() || data->empty()) return std::nullopt;
  if (string_field((*data)[0], "owned_by").rfind("duet", 0) != 0) return std::nullopt;
  return string_field((*data)[0], "id");
}

}  // namespace duet::cli
