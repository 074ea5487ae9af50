#include "cli/run/local_chat.h"

#include <algorithm>
#include <chrono>

#include "api/request_model.h"
#include "host/start_generation.h"

namespace duet::cli {

ReplyOutcome LocalChat::reply(const Json& body, ReplySink& sink,
                              const std::atomic<bool>& interrupted, bool keep_all) {
  ReplyOutcome out;
  const auto refuse = [&](const std::string& why) {
    out.end = is_context_overflow(why) ? ReplyOutcome::End::kTooLong : ReplyOutcome::End::kError;
    out.error = why;
    return out;
  };
  auto request = parse_openai_chat(body);
  if (!request) return refuse(request.message());
  auto prepared = prepare_generation(host_, *request);
  if (!prepared) return refuse(prepared.message());
  const int64_t context = host_.prompt_context().max_context;
  const int64_t prompt = static_cast<int64_t>(prepared->gen.prompt.size());
  const int64_t room = std::min<int64_t>(request->max_tokens.value_or(context), context / 4);
  if (!keep_all && prompt + room > context)
    return refuse("the conversation has " + std::to_string(prompt) + " tokens; with " +
                  std::to_string(room) + " for the reply it exceeds the context of " +
                  std::to_string(context) + " tokens");
  auto running = start_generation(host_, *request, *prepared);
  if (!running) return refuse(running.message());
  RequestHandle& handle = *running->handle;
  OutputPipeline& pipeline = *running->output;
  const auto show = [&](const OutputDelta& d) {
    if (!d.reasoning.empty()) sink.reasoning(d.reasoning);
    if (!d.content.empty()) sink.content(d.content);
    for (const ParsedToolCall& call : d.finished_calls)
      sink.tool_call(call.name, call.arguments_string);
    out.answer += d.content;
  };

  FinishReason finish = FinishReason::kNone;
  bool cancelled = false, stopped = false, called_tool = false;
  TokenEvent ev;
  while (finish == FinishReason::kNone) {
    if (interrupted.load() && !cancelled && !stopped) {
      handle.cancel();  // the engine ends it with a final event at its next step
      cancelled = true;
    }
    if (!handle.pop(ev, std::chrono::milliseconds(50))) continue;
    if (!ev.tokens.empty() && !stopped) {
      const OutputDelta d = pipeline.push(ev);
      called_tool |= !d.finished_calls.empty();
      show(d);
    }
    finish = ev.finish;
    if (pipeline.stopped() && !stopped) {
      handle.cancel();  // a stop string: the answer is complete (as the server does)
      stopped = true;
    }
  }
  if (!stopped) {
    const OutputDelta d = pipeline.finish();
    called_tool |= !d.finished_calls.empty();
    show(d);
  }

  const RequestStats s = handle.stats();
  const Clock::time_point first = s.first_token == Clock::time_point{} ? s.finished : s.first_token;
  const double decode_s = std::chrono::duration<double>(s.finished - first).count();
  out.first_token_ms = std::chrono::duration<double, std::milli>(first - s.submitted).count();
  // Tokens after the first over the time since the first: the decode rate, apart from the
  // prompt's processing (shown as the time to the first token).
  out.tokens = s.generated_tokens;
  out.tokens_per_s =
      s.generated_tokens > 1 && decode_s > 0 ? (s.generated_tokens - 1) / decode_s : 0;
  out.thinking = request->mode.enabled;
  if (stopped)
    out.end = ReplyOutcome::End::kStop;
  else if (cancelled)
    out.end = ReplyOutcome::End::kInterrupted;
  else if (finish == FinishReason::kError)
    out.end = ReplyOutcome::End::kError, out.error = "generation failed: " + ev.error;
  else if (finish == FinishReason::kLength)
    out.end = ReplyOutcome::End::kLength;
  else
    out.end = called_tool ? ReplyOutcome::End::kToolCalls : ReplyOutcome::End::kStop;
  return out;
}

}  // namespace duet::cli
