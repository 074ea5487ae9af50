// duet_scripted: `duet serve` and `duet run` with a scripted token source, built with the
// tests only (never part of the duet binary). A random model cannot write a tool call or
// open a think block on cue, so the black-box tests give this binary a script:
//   duet_scripted --script FILE serve|run [that command's flags...]
// FILE is a JSON object {"KEY": "REPLY", ...}. When a request's prompt contains KEY's tokens,
// the engine's logits are rewritten so that the model writes REPLY's tokens (special tokens
// such as <think> and <tool_call> included), then <|im_end|>. Everything else is production
// code: HTTP, parsing, the template, the engine, sampling, the output parsers, the formatters.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "host/host_options.h"
#include "text/tokenizer/bpe_tokenizer.h"

namespace duet::cli {
int fail(const std::string& message) {
  std::fprintf(stderr, "duet_scripted: %s\n", message.c_str());
  return 1;
}
}  // namespace duet::cli

namespace {

struct Script {
  std::vector<int32_t> key;    // looked for in the prompt
  std::vector<int32_t> reply;  // forced, then the end token
};

bool contains(std::span<const int32_t> hay, const std::vector<int32_t>& needle) {
  return !needle.empty() &&
         std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

duet::LogitsOverride make_override(const nlohmann::json& scripts, const duet::Tokenizer& tok) {
  std::vector<Script> all;
  for (const auto& [key, reply] : scripts.items())
    all.push_back({tok.encode_user(key), tok.encode_template(reply.get<std::string>())});
  const int32_t end = tok.find_token("<|im_end|>").value_or(-1);
  return [all, end](std::span<const int32_t> prompt, std::span<const int32_t> generated,
                    std::span<float> logits) {
    for (const Script& s : all) {
      if (!contains(prompt, s.key)) continue;
      const size_t i = generated.size();
      const int32_t want = i < s.reply.size() ? s.reply[i] : end;
      if (want < 0 || static_cast<size_t>(want) >= logits.size()) return;
      // Only `want` is possible: whatever the sampling settings, it is the token sampled.
      std::fill(logits.begin(), logits.end(), -INFINITY);
      logits[static_cast<size_t>(want)] = 0.0f;
      return;
    }
  };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"duet serve with a scripted token source (tests only)"};
  std::string script_path;
  app.add_option("--script", script_path, "JSON object: prompt key -> reply text")->required();
  app.require_subcommand(1);
  nlohmann::json scripts;
  duet::cli::Action run;
  auto script = [&](duet::HostOptions& o) {
    o.test_logits_override = [&scripts](const duet::Tokenizer& tok) {
      return make_override(scripts, tok);
    };
  };
  duet::cli::add_serve_command(app, &run, script);
  duet::cli::add_run_command(app, &run, script);
  CLI11_PARSE(app, argc, argv);
  std::ifstream in(script_path);
  std::stringstream text;
  text << in.rdbuf();
  scripts = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!in || !scripts.is_object())
    return duet::cli::fail("--script: not a JSON object: " + script_path);
  for (const auto& [key, reply] : scripts.items())
    if (!reply.is_string()) return duet::cli::fail("--script: replies must be strings");
  return run ? run() : 1;
}
