// `duet run` without --url: the model in this process. It goes the server's way without the
// socket: the same request parser (an OpenAI chat body), then the host's prepare_generation and
// start_generation (host/start_generation.h) that the server's routes call, so what it shows is
// what a client of `duet serve` would get.
#pragma once

#include "cli/run/chat_backend.h"
#include "host/model_host.h"

namespace duet::cli {

class LocalChat : public ChatBackend {
 public:
  explicit LocalChat(ModelHost& host) : host_(host) {}
  // Unless `keep_all`, a conversation whose prompt leaves less than a quarter of the context
  // (or max_tokens, if smaller) for the reply is kTooLong, so that old turns go before the
  // reply is clipped.
  ReplyOutcome reply(const Json& body, ReplySink& sink, const std::atomic<bool>& interrupted,
                     bool keep_all) override;

 private:
  ModelHost& host_;
};

}  // namespace duet::cli
