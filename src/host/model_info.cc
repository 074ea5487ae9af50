#include "host/model_info.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <span>

namespace duet {
namespace {

// FNV-1a over some bytes, twice with different offsets: a 128-bit hex id that tells files
// apart in /api/tags. It is not a checksum of the whole file (that would read gigabytes).
std::string hex_id(std::span<const uint8_t> bytes, uint64_t size) {
  uint64_t a = 0xcbf29ce484222325ull ^ size, b = 0x84222325cbf29ce4ull + size;
  for (uint8_t c : bytes) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x100000001b3ull + 1;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

std::string file_stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? "model" : stem;
}

}  // namespace

std::string format_parameter_count(uint64_t n) {
  char buf[32];
  if (n >= 1'000'000'000ull)
    std::snprintf(buf, sizeof buf, "%.1fB", n / 1e9);
  else if (n >= 1'000'000ull)
    std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1fK", n / 1e3);
  return buf;
}

ModelInfo describe_model(const GgufFile& file, const std::string& path, bool demo,
                         std::string name) {
  ModelInfo info;
  info.demo = demo;
  if (name.empty()) name = demo ? "qwen3-demo" : file_stem(path);
  info.name = std::move(name);
  info.owned_by = demo ? "duet-demo" : "duet";
  info.description =
      demo ? "duet's built-in demo model: Qwen3 architecture, byte-level vocabulary, RANDOM "
             "weights (its output is noise). Start duet with -m FILE.gguf to serve a real model."
           : "Qwen3 model served by duet from " + file_stem(path) + ".gguf";
  info.created = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  std::error_code ec;
  info.size_bytes = demo ? 0 : std::filesystem::file_size(path, ec);
  uint64_t params = 0;
  std::map<GgmlType, uint64_t> bytes_by_type;
  std::string names;
  for (const GgufTensorInfo& t : file.tensors()) {
    params += t.n_elements;
    if (t.n_dims >= 2) bytes_by_type[t.type] += t.n_bytes;
    names += t.name;
    if (demo) info.size_bytes += t.n_bytes;
  }
  GgmlType main_type = GgmlType::F32;
  uint64_t most = 0;
  for (const auto& [type, n] : bytes_by_type)
    if (n > most) most = n, main_type = type;
  info.parameter_size = format_parameter_count(params);
  info.quantization = ggml_type_name(main_type);
  for (char& ch : info.quantization)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  info.digest =
      hex_id(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(names.data()), names.size()),
             info.size_bytes + params);
  return info;
}

}  // namespace duet
