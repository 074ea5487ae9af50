// duet logits -m FILE --tokens 1,2,3 --out F [--backend cpu|ref] [-t N]
// Raw little-endian float32 logits, one row of n_vocab values per position.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "cli/commands.h"
#include "model/qwen3_model.h"

namespace duet::cli {
namespace {

struct LogitsArgs {
  std::string model;
  std::string tokens;
  std::string out;
  double yarn_factor = 0;
  int64_t yarn_original_ctx = 0;
  std::string backend = "auto";
  int threads = 0;  // 0: every hardware thread
};

Result<std::vector<int32_t>> parse_token_list(const std::string& s) {
  std::vector<int32_t> ids;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string item = s.substr(i, j - i);
    if (item.empty() || item.size() > 10 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return Status::error("--tokens: '" + item.substr(0, 20) + "' is not a token id");
    const long long v = std::stoll(item);
    if (v > 0x7FFFFFFF) return Status::error("--tokens: " + item + " is too large");
    ids.push_back(static_cast<int32_t>(v));
    i = j + 1;
  }
  if (ids.empty()) return Status::error("--tokens: empty list");
  return ids;
}

int run_logits(const LogitsArgs& a) {
  auto ids = parse_token_list(a.tokens);
  if (!ids) return fail(ids.message());
  ModelLoadOptions opts;
  opts.yarn_factor = a.yarn_factor;
  opts.yarn_original_ctx = a.yarn_original_ctx;
  if (a.threads < 0 || a.threads > 1024) return fail("--threads must be in [0, 1024]");
  ThreadPool pool(a.threads);  // outlives the model's backend
  auto backend = make_backend(a.backend, pool);
  if (!backend) return fail(backend.message());
  auto model = Qwen3Model::load(a.model, std::move(backend->backend), opts);
  if (!model) return fail("cannot load " + a.model + ": " + model.message());
  SequenceKv kv = (*model)->new_sequence();
  std::vector<float> logits;
  Status s = (*model)->forward(*ids, kv, /*all_logits=*/true, logits);
  if (!s) return fail(s.message());
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(a.out.c_str(), "wb"), &std::fclose);
  if (!f) return fail("cannot create " + a.out);
  if (std::fwrite(logits.data(), sizeof(float), logits.size(), f.get()) != logits.size())
    return fail("write to " + a.out + " failed");
  return 0;
}

}  // namespace

void add_logits_command(CLI::App& app, Action* run) {
  auto args = std::make_shared<LogitsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "logits", "write the logits of a token list (float32, one row per position)");
  cmd->add_option("-m,--model", args->model, "GGUF model file")->required();
  cmd->add_option("--tokens", args->tokens, "comma-separated token ids")->required();
  cmd->add_option("--out", args->out, "output file")->required();
  cmd->add_option("--rope-scale", args->yarn_factor, "turn on YaRN with this factor (e.g. 4)");
  cmd->add_option("--yarn-orig-ctx", args->yarn_original_ctx,
                  "YaRN original context (default: from the file)");
  add_backend_option(cmd, &args->backend);
  cmd->add_option("-t,--threads", args->threads, "threads for the cpu backend (default: all)");
  cmd->callback([run, args] { *run = [args] { return run_logits(*args); }; });
}

}  // namespace duet::cli
