// `duet run --url`: a running server over its OpenAI API (streaming chat completions), so that
// a second terminal does not load a second copy of the model. Any server with that API works
// (duet, vLLM, llama.cpp's server, Ollama's /v1); duet's own fields (the mode it chose) are
// read when they are there.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/run/chat_backend.h"
#include "loadgen/http_client.h"

namespace duet::cli {

class RemoteChat : public ChatBackend {
 public:
  // Resolves the URL and asks for its models. A server that cannot be reached, refuses the
  // key, or lists no model is an error that says so.
  static Result<std::unique_ptr<RemoteChat>> connect(const std::string& url,
                                                     const std::string& api_key);
  // The ids /v1/models lists, in its order.
  const std::vector<std::string>& models() const { return models_; }
  // Streams the reply. Ctrl-C closes the connection: the server then cancels the generation.
  ReplyOutcome reply(const Json& body, ReplySink& sink, const std::atomic<bool>& interrupted,
                     bool keep_all) override;

 private:
  RemoteChat() = default;
  boost::asio::io_context ioc_;
  loadgen::Target target_;
  loadgen::Endpoints endpoints_;
  std::vector<std::string> models_;
};

// The model a duet server at `url` serves, when one answers there within a fraction of a
// second (`duet run` says it could use it rather than load a second copy); nullopt otherwise.
std::optional<std::string> probe_duet_server(const std::string& url);

}  // namespace duet::cli
