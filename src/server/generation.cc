#include "server/generation.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

#include "api/response_format.h"
#include "host/start_generation.h"
#include "server/front_door.h"

namespace duet {
namespace {

int64_t steady_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string random_id(const char* prefix) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += kChars[rd() % (sizeof kChars - 1)];
  return id;
}

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  Generation(ServerContext& ctx, std::shared_ptr<Exchange> ex, ApiRequest request,
             std::unique_ptr<ResponseFormatter> formatter, std::unique_ptr<OutputPipeline> output)
      : ctx_(ctx),
        ex_(std::move(ex)),
        request_(std::move(request)),
        formatter_(std::move(formatter)),
        pipeline_(std::move(output)) {}

  // On the strand. The engine calls on_event from its own thread after every push; that
  // only posts a drain to the strand (at most one pending), so the engine never waits on a
  // socket.
  void start(std::shared_ptr<RequestHandle> handle) {
    handle_ = std::move(handle);
    self_ = shared_from_this();
    ctx_.track(handle_);
    std::weak_ptr<Generation> weak = self_;
    handle_->set_on_event([weak] {
      if (auto g = weak.lock()) g->schedule_drain();
    });
    ex_->on_client_gone([weak] {
      if (auto g = weak.lock()) g->client_gone();
    });
    if (request_.stream) {
      std::vector<HttpHeader> headers = {{"Cache-Control", "no-cache"},
                                         {"X-Accel-Buffering", "no"},
                                         {"X-Duet-Thinking-Mode", mode_header()}};
      ex_->begin_stream(200, formatter_->stream_content_type(), std::move(headers));
      send(formatter_->stream_start());
      if (ctx_.options.sse_keepalive_ms > 0) arm_keepalive();
    }
    // Events pushed before on_event was set would otherwise wait for the next one.
    schedule_drain();
  }

 private:
  void schedule_drain() {
    if (drain_posted_.exchange(true)) return;
    auto self = shared_from_this();
    ex_->post([self] {
      self->drain_posted_.store(false);
      self->drain();
    });
  }

  std::string mode_header() const { return duet::mode_header(request_.mode); }

  void send(std::string bytes) {
    if (!bytes.empty()) ex_->send(std::move(bytes));
  }

  // While a long prompt is prefilling, a keep-alive (an SSE comment; an empty Ollama line)
  // keeps proxies and clients from timing out; it stops with the first token.
  void arm_keepalive() {
    std::weak_ptr<Generation> weak = self_;
    ex_->after(std::chrono::milliseconds(ctx_.options.sse_keepalive_ms), [weak] {
      auto g = weak.lock();
      if (!g || g->done_ || g->saw_token_) return;
      g->send(g->formatter_->stream_keepalive());
      g->arm_keepalive();
    });
  }

  void drain() {
    if (done_) return;
    TokenEvent ev;
    while (handle_->try_pop(ev)) {
      if (!ev.tokens.empty()) on_tokens(ev);
      if (ev.finish != FinishReason::kNone) {
        finish(ev);
        return;
      }
    }
  }

  void on_tokens(const TokenEvent& ev) {
    if (!saw_token_) {
      saw_token_ = true;
      const RequestStats s = handle_->stats();
      ctx_.metrics.observe_ttft(seconds_between(s.submitted, ev.emitted));
    } else {
      ctx_.metrics.observe_inter_token(seconds_between(last_emit_, ev.emitted));
    }
    last_emit_ = ev.emitted;
    if (stop_hit_ || client_gone_) return;
    OutputDelta d = pipeline_->push(ev);
    deliver(d, ev.emitted);
    if (pipeline_->stopped()) {
      // A stop string: the answer is complete; the engine frees the sequence now.
      stop_hit_ = true;
      handle_->cancel();
    }
  }

  void deliver(const OutputDelta& d, Clock::time_point emitted) {
    if (!request_.stream) {
      formatter_->accumulate(d);
      return;
    }
    if (ctx_.options.debug_timestamps) {
      DebugStamp stamp{steady_ns(emitted), steady_ns(Clock::now()), d.tokens};
      send(formatter_->stream_delta(d, &stamp));
    } else {
      send(formatter_->stream_delta(d, nullptr));
    }
  }

  void client_gone() {
    if (done_ || client_gone_) return;
    client_gone_ = true;
    CancelPhase phase = CancelPhase::kDecode;
    if (!saw_token_) {
      const RequestStats s = handle_->stats();
      phase = s.scheduled == Clock::time_point{} ? CancelPhase::kQueued : CancelPhase::kPrefill;
    }
    ctx_.metrics.cancelled(phase);
    static constexpr const char* kPhase[] = {"queued", "prefill", "decode"};
    ctx_.log.info(ex_->request_id(), std::string("client went away while ") +
                                         kPhase[static_cast<int>(phase)] + "; cancelled");
    handle_->cancel();
  }

  std::string finish_reason(const TokenEvent& last) const {
    if (stop_hit_) return "stop";
    switch (last.finish) {
      case FinishReason::kStop:
        return pipeline_->tool_calls().empty() ? "stop" : "tool_calls";
      case FinishReason::kLength:
        return "length";
      default:
        return "abort";
    }
  }

  void finish(const TokenEvent& last) {
    done_ = true;
    ctx_.untrack(handle_);
    const RequestStats s = handle_->stats();
    const std::string reason = client_gone_ ? "abort" : finish_reason(last);
    FinishInfo f;
    f.reason = reason;
    f.usage = {s.prompt_tokens, s.generated_tokens, s.cached_prompt_tokens, s.reasoning_tokens};
    f.mode = request_.mode;
    const Clock::time_point first =
        s.first_token == Clock::time_point{} ? s.finished : s.first_token;
    const Clock::time_point scheduled =
        s.scheduled == Clock::time_point{} ? s.submitted : s.scheduled;
    f.timings.total_ns = steady_ns(s.finished) - steady_ns(s.submitted);
    f.timings.prompt_eval_ns = steady_ns(first) - steady_ns(scheduled);
    f.timings.eval_ns = steady_ns(s.finished) - steady_ns(first);

    if (!client_gone_) {
      if (last.finish == FinishReason::kError) {
        ctx_.log.error(ex_->request_id(), "engine error: " + last.error);
        if (request_.stream) {
          send(formatter_->stream_error("generation failed inside the server"));
          ex_->end_stream();
        } else {
          respond_error(*ex_, 500, "generation failed inside the server");
        }
      } else {
        if (!stop_hit_) deliver(pipeline_->finish(), Clock::now());
        if (request_.stream) {
          send(formatter_->stream_end(f));
          ex_->end_stream();
        } else {
          HttpResponse res;
          res.content_type = "application/json";
          res.body = formatter_->full_response(f);
          res.headers.push_back({"X-Duet-Thinking-Mode", mode_header()});
          ex_->respond(std::move(res));
        }
      }
    } else if (request_.stream) {
      ex_->end_stream();
    } else {
      respond_error(*ex_, 499, "client closed the request");
    }
    // The response's last bytes are queued: the request no longer holds a place (the drain
    // and the queue bound count these). Metrics after, so that a finished request seen in
    // /metrics has already given its place back.
    ctx_.active_generations.fetch_sub(1);
    ctx_.metrics.observe_e2e(seconds_between(s.submitted, s.finished));
    ctx_.metrics.observe_queue_time(seconds_between(s.submitted, scheduled));
    ctx_.metrics.request_finished(reason, s.prompt_tokens, s.generated_tokens, s.reasoning_tokens,
                                  s.cached_prompt_tokens);
    char line[200];
    std::snprintf(
        line, sizeof line,
        "finished: %s, prompt %lld (cached %lld), generated %lld (reasoning %lld), %.1f ms",
        reason.c_str(), static_cast<long long>(s.prompt_tokens),
        static_cast<long long>(s.cached_prompt_tokens), static_cast<long long>(s.generated_tokens),
        static_cast<long long>(s.reasoning_tokens), seconds_between(s.submitted, s.finished) * 1e3);
    ctx_.log.info(ex_->request_id(), line);

    self_.reset();  // the handle's on_event holds only a weak reference
  }

  ServerContext& ctx_;
  std::shared_ptr<Exchange> ex_;
  ApiRequest request_;
  std::unique_ptr<ResponseFormatter> formatter_;
  std::unique_ptr<OutputPipeline> pipeline_;
  std::shared_ptr<RequestHandle> handle_;
  std::shared_ptr<Generation> self_;  // alive until the last event
  std::atomic<bool> drain_posted_{false};
  bool saw_token_ = false;
  bool stop_hit_ = false;
  bool client_gone_ = false;
  bool done_ = false;
  Clock::time_point last_emit_;
};

}  // namespace

void run_generation(ServerContext& ctx, const std::shared_ptr<Exchange>& ex, ApiRequest request,
                    PreparedRequest prepared) {
  const ModelInfo& info = ctx.host.info();
  FormatterConfig fc;
  fc.dialect = request.dialect;
  fc.endpoint = request.endpoint;
  fc.model = request.model.empty() ? info.name : request.model;
  fc.created = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  fc.id = random_id(request.endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-");
  fc.include_usage = request.include_usage;
  fc.logprobs = request.sampling.logprobs;
  fc.completion_logprobs = request.completion_logprobs;

  if (request.load_only) {
    HttpResponse res;
    res.body = ollama_lifecycle_response(fc, request.unload);
    return ex->respond(std::move(res));
  }

  // The queue bound: beyond the batch and the allowed queue, refuse at once rather than let
  // a request wait without limit.
  const int64_t limit = ctx.options.model.max_running + ctx.options.max_queue;
  if (ctx.active_generations.fetch_add(1) >= limit) {
    ctx.active_generations.fetch_sub(1);
    ctx.metrics.rejected("queue_full");
    HttpResponse res = error_response(ex->request().path, 429,
                                      "the server is at capacity (" + std::to_string(limit) +
                                          " requests running or queued); retry shortly");
    res.headers.push_back({"Retry-After", "1"});
    return ex->respond(std::move(res));
  }

  ctx.metrics.mode_decision(request.mode.enabled,
                            std::string(thinking_source_name(request.mode.source)));
  auto running = start_generation(ctx.host, request, prepared);
  if (!running) {
    ctx.active_generations.fetch_sub(1);
    // Past the draining check but too late for the engine: the server is stopping.
    if (ctx.draining.load()) return respond_error(*ex, 503, "the server is shutting down");
    return respond_error(*ex, 400, running.message());
  }
  ctx.log.info(ex->request_id(), "generating: prompt " +
                                     std::to_string(prepared.gen.prompt.size()) + " tokens, max " +
                                     std::to_string(prepared.gen.max_tokens) + ", mode " +
                                     mode_header(request.mode) + " (" + request.mode.reason + ")");
  auto g = std::make_shared<Generation>(ctx, ex, std::move(request), make_formatter(fc),
                                        std::move(running->output));
  g->start(std::move(running->handle));
}

}  // namespace duet
