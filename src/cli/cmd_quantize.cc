// duet quantize IN.gguf OUT.gguf TYPE: a model's matrices in a quantized type, with the tensor
// choices llama.cpp's quantizer makes for that type name (src/quantize/quant_plan.h).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "base/progress.h"
#include "cli/commands.h"
#include "quantize/quantize_file.h"

namespace duet::cli {
namespace {

struct QuantizeArgs {
  std::string in, out, type;
  int threads = 0;
  bool allow_requantize = false;
};

int run_quantize(const QuantizeArgs& a) {
  const auto preset = quant_preset(a.type);
  if (!preset) return fail("unknown type '" + a.type + "' (one of " + quant_preset_names() + ")");
  if (a.threads < 0) return fail("--threads must be 0 (every core) or more");
  QuantizeOptions o;
  o.preset = *preset;
  o.threads = a.threads;
  o.allow_requantize = a.allow_requantize;
  // A bar on a terminal, a line at each quarter otherwise (base/progress.h).
  Progress progress("quantizing " + a.in + " to " + preset->name, 0, "tensors");
  o.progress = [&progress](size_t done, size_t total, const std::string&, GgmlType) {
    progress.set(static_cast<int64_t>(done), static_cast<int64_t>(total));
  };
  const auto start = std::chrono::steady_clock::now();
  auto r = quantize_gguf(a.in, a.out, o);
  progress.finish();
  if (!r) return fail("quantize: " + r.status().message());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr,
               "wrote %s: %s, %zu of %zu tensors quantized, %.1f MiB -> %.1f MiB in %.1f s\n",
               a.out.c_str(), preset->name.c_str(), r->quantized, r->tensors,
               static_cast<double>(r->bytes_in) / (1 << 20),
               static_cast<double>(r->bytes_out) / (1 << 20), seconds);
  return 0;
}

}  // namespace

void add_quantize_command(CLI::App& app, Action* run) {
  auto a = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "write a GGUF model again with its matrices quantized (as llama-quantize does)");
  cmd->add_option("input", a->in, "the model to quantize (.gguf, F32/F16/BF16)")->required();
  cmd->add_option("output", a->out, "the file to write (.gguf)")->required();
  cmd->add_option("type", a->type,
                  "Q8_0 | Q6_K | Q5_K_M | Q5_K_S | Q5_0 | Q5_1 | Q4_K_M | Q4_K_S | "
                  "Q4_0 | Q4_1 | IQ4_XS | IQ4_NL | Q3_K_M | F16 | BF16 | F32")
      ->required();
  cmd->add_option("--threads", a->threads, "threads (0: every core)");
  cmd->add_flag("--allow-requantize", a->allow_requantize,
                "quantize a file that is already quantized (its error compounds)");
  cmd->callback([run, a] { *run = [a] { return run_quantize(*a); }; });
}

}  // namespace duet::cli
