// duet info FILE [--json]: what a GGUF file holds, and whether duet can run it.
// duet info --devices [--json]: the Vulkan devices duet can compute on.
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/ref_backend.h"
#include "backend/vulkan/vk_context.h"
#include "cli/commands.h"
#include "model/qwen3_model.h"
#include "text/tokenizer/vocab.h"

namespace duet::cli {
namespace {

struct InfoArgs {
  std::string path;
  bool json = false;
  bool tensors = true;
  bool devices = false;
};

// Exit 0 with at least one device, 2 with none (a script can test for a GPU), 1 when no
// Vulkan driver could be opened at all.
int run_devices(const InfoArgs& a) {
  auto devices = vk::list_devices();
  if (!devices) return fail(devices.message());
  nlohmann::json list = nlohmann::json::array();
  for (const vk::DeviceInfo& d : *devices) {
    if (!a.json) {
      std::printf(
          "vulkan:%u  %s  (%s)\n    driver %s, Vulkan %s, %.0f MiB device memory\n"
          "    subgroup %u, shared memory %u KiB, largest buffer %.0f MiB\n"
          "    optional features: %s\n",
          d.index, d.name.c_str(), d.type.c_str(), d.driver.c_str(), d.api_string().c_str(),
          static_cast<double>(d.device_local_bytes) / (1 << 20), d.subgroup_size,
          d.max_shared_memory / 1024, static_cast<double>(d.max_storage_buffer_range) / (1 << 20),
          d.features_string().c_str());
      continue;
    }
    list.push_back({{"index", d.index},
                    {"name", d.name},
                    {"type", d.type},
                    {"driver", d.driver},
                    {"api", d.api_string()},
                    {"device_local_bytes", d.device_local_bytes},
                    {"subgroup_size", d.subgroup_size},
                    {"max_shared_memory", d.max_shared_memory},
                    {"max_storage_buffer_range", d.max_storage_buffer_range},
                    {"fp16_storage", d.storage_16bit},
                    {"fp16_math", d.float16_math},
                    {"int8_math", d.int8_math},
                    {"integer_dot_product", d.integer_dot_product},
                    {"subgroup_arithmetic", d.subgroup_arithmetic},
                    {"cooperative_matrix", d.cooperative_matrix}});
  }
  if (a.json) std::cout << nlohmann::json{{"devices", list}}.dump(2) << "\n";
  if (devices->empty() && !a.json) std::printf("no Vulkan 1.2 device with a compute queue\n");
  return devices->empty() ? 2 : 0;
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

int run_info(const InfoArgs& a) {
  if (a.devices) return run_devices(a);
  if (a.path.empty()) return fail("info: name a GGUF file, or --devices");
  const size_t rss_before = resident_bytes();
  auto file = GgufModelFile::open(a.path);
  if (!file) return fail("cannot read " + a.path + ": " + file.message());
  const GgufFile& g = (*file)->gguf();
  nlohmann::json j;
  j["file_bytes"] = (*file)->file_size();
  j["gguf_version"] = g.version();
  j["alignment"] = g.alignment();
  std::string arch;
  if (const GgufValue* v = g.find("general.architecture"); v && v->as_string())
    arch = *v->as_string();
  j["architecture"] = arch;
  if (const GgufValue* v = g.find("general.name"); v && v->as_string()) j["name"] = *v->as_string();

  nlohmann::json meta = nlohmann::json::object();
  for (const auto& kv : g.metadata()) {
    if (kv.key == "tokenizer.chat_template") continue;  // shown as present/absent below
    meta[kv.key] = kv.value.to_display_string();
  }
  j["metadata"] = meta;

  // Types by tensor count and bytes.
  std::map<std::string, std::pair<int, uint64_t>> by_type;
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : g.tensors()) {
    auto& e = by_type[ggml_type_name(t.type)];
    e.first++;
    e.second += t.n_bytes;
    std::vector<int64_t> shape(t.ne.begin(), t.ne.begin() + t.n_dims);
    tensors.push_back({{"name", t.name},
                       {"type", ggml_type_name(t.type)},
                       {"shape", shape},
                       {"bytes", t.n_bytes}});
  }
  j["tensors"] = tensors;
  for (const auto& [name, e] : by_type)
    j["tensor_types"][name] = {{"count", e.first}, {"bytes", e.second}};

  auto vocab = read_vocab(g);
  if (vocab) {
    j["tokenizer"] = {{"model", vocab->model},
                      {"pre", vocab->pre},
                      {"tokens", vocab->tokens.size()},
                      {"merges", vocab->merges.size()},
                      {"control_tokens", vocab->count_of_type(3)},
                      {"bos_id", vocab->bos_id},
                      {"eos_id", vocab->eos_id},
                      {"pad_id", vocab->pad_id}};
    if (vocab->eos_id >= 0) j["tokenizer"]["eos"] = std::string(vocab->tokens[vocab->eos_id]);
  } else {
    j["tokenizer"] = {{"error", vocab.message()}};
  }
  j["chat_template"] = g.find("tokenizer.chat_template") != nullptr;

  // Bind the model as `serve` would, to report whether duet can run the file.
  auto model = Qwen3Model::load(a.path, make_ref_backend());
  if (model) {
    const Qwen3Config& c = (*model)->config();
    j["qwen3"] = {{"layers", c.n_layer},
                  {"hidden", c.n_embd},
                  {"heads", c.n_head},
                  {"kv_heads", c.n_head_kv},
                  {"head_dim", c.head_dim},
                  {"ffn", c.n_ff},
                  {"vocab", c.n_vocab},
                  {"context", c.n_ctx_train},
                  {"max_context", c.max_context()},
                  {"rope_base", c.rope_base},
                  {"rms_eps", c.rms_eps},
                  {"yarn_factor",
                   c.rope_scaling.kind == RopeScaling::Kind::kYarn ? c.rope_scaling.factor : 0.0},
                  {"tied_output", g.find_tensor("output.weight") == nullptr}};
    j["runnable"] = true;
    // Resident memory after loading: weights stay in the map and are paged in on use.
    j["resident_bytes_after_load"] = resident_bytes();
    j["resident_bytes_before_load"] = rss_before;
  } else {
    j["runnable"] = false;
    j["load_error"] = model.message();
  }

  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "file:          " << a.path << " (" << mib(static_cast<double>((*file)->file_size()))
            << ", GGUF v" << g.version() << ")\n";
  std::cout << "architecture:  " << (arch.empty() ? "(none)" : arch) << "\n";
  if (j.contains("name")) std::cout << "name:          " << j["name"].get<std::string>() << "\n";
  if (model)
    std::cout << "qwen3:         " << (*model)->config().summary() << "\n";
  else
    std::cout << "cannot run:    " << model.message() << "\n";
  std::cout << "tensor types: ";
  for (const auto& [name, e] : by_type)
    std::cout << " " << name << " x" << e.first << " (" << mib(static_cast<double>(e.second))
              << ")";
  std::cout << "\n";
  if (vocab)
    std::cout << "tokenizer:     " << vocab->model << "/" << vocab->pre << ", "
              << vocab->tokens.size() << " tokens, " << vocab->merges.size() << " merges, "
              << vocab->count_of_type(3) << " control tokens, eos " << vocab->eos_id << "\n";
  else
    std::cout << "tokenizer:     " << vocab.message() << "\n";
  std::cout << "chat template: " << (j["chat_template"].get<bool>() ? "present" : "absent") << "\n";
  if (model)
    std::cout << "resident:      " << mib(static_cast<double>(resident_bytes())) << " after load\n";
  std::cout << "metadata:\n";
  for (const auto& kv : g.metadata())
    if (kv.key != "tokenizer.chat_template")
      std::cout << "  " << kv.key << " = " << kv.value.to_display_string() << "\n";
  if (a.tensors) {
    std::cout << "tensors (" << g.tensors().size() << "):\n";
    for (const auto& t : g.tensors()) {
      char line[256];
      std::snprintf(line, sizeof line, "  %-32s %-5s %-20s %s\n", t.name.c_str(),
                    ggml_type_name(t.type), t.shape_string().c_str(),
                    mib(static_cast<double>(t.n_bytes)).c_str());
      std::cout << line;
    }
  }
  return model ? 0 : 2;
}

}  // namespace

void add_info_command(CLI::App& app, Action* run) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "info", "show what a GGUF file holds: shapes, tensors, tokenizer, template");
  cmd->add_option("file", args->path, "GGUF model file");
  cmd->add_flag("--devices", args->devices, "list the Vulkan devices instead (GPUs, lavapipe)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("!--no-tensors", args->tensors, "omit the tensor table");
  cmd->callback([run, args] { *run = [args] { return run_info(*args); }; });
}

}  // namespace duet::cli
