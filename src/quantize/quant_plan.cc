#include "quantize/quant_plan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace duet {

namespace {

enum class Preset {
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ3_K_M,
  kQ4_K_S,
  kQ4_K_M,
  kQ5_K_S,
  kQ5_K_M,
  kQ6_K,
  kIQ4_NL,
  kIQ4_XS,
  kF16,
  kBF16,
  kF32
};

struct PresetRow {
  Preset id;
  const char* name;
  GgmlType base;
  uint32_t file_type;
};

constexpr std::array<PresetRow, 16> kPresets = {{
    {Preset::kQ8_0, "Q8_0", GgmlType::Q8_0, 7},
    {Preset::kQ6_K, "Q6_K", GgmlType::Q6_K, 18},
    {Preset::kQ5_K_M, "Q5_K_M", GgmlType::Q5_K, 17},
    {Preset::kQ5_K_S, "Q5_K_S", GgmlType::Q5_K, 16},
    {Preset::kQ5_0, "Q5_0", GgmlType::Q5_0, 8},
    {Preset::kQ5_1, "Q5_1", GgmlType::Q5_1, 9},
    {Preset::kQ4_K_M, "Q4_K_M", GgmlType::Q4_K, 15},
    {Preset::kQ4_K_S, "Q4_K_S", GgmlType::Q4_K, 14},
    {Preset::kQ4_0, "Q4_0", GgmlType::Q4_0, 2},
    {Preset::kQ4_1, "Q4_1", GgmlType::Q4_1, 3},
    {Preset::kIQ4_XS, "IQ4_XS", GgmlType::IQ4_XS, 30},
    {Preset::kIQ4_NL, "IQ4_NL", GgmlType::IQ4_NL, 25},
    {Preset::kQ3_K_M, "Q3_K_M", GgmlType::Q3_K, 12},
    {Preset::kF16, "F16", GgmlType::F16, 1},
    {Preset::kBF16, "BF16", GgmlType::BF16, 32},
    {Preset::kF32, "F32", GgmlType::F32, 0},
}};

const PresetRow* find_row(std::string_view name) {
  for (const PresetRow& r : kPresets) {
    const std::string_view n = r.name;
    if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
          return a == std::toupper(static_cast<unsigned char>(b));
        }))
      return &r;
  }
  return nullptr;
}

// Layers whose attn_v / ffn_down get more bits in the _M mixtures: the first and last
// eighth, and every third layer between.
bool use_more_bits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// "blk.12.ffn_down.weight" -> 12; -1 for a tensor outside the layers.
int64_t layer_of(const std::string& name) {
  long layer = -1;
  if (std::sscanf(name.c_str(), "blk.%ld.", &layer) != 1) return -1;
  return layer;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The mixture's choice before the row-length check.
GgmlType mixture_type(Preset p, GgmlType base, const std::string& name, const QuantModelShape& m,
                      int64_t ne0) {
  const bool is_output = name == "output.weight" || (!m.has_output && name == "token_embd.weight");
  if (is_output) {
    if (ne0 % 256 != 0) return GgmlType::Q8_0;
    return base == GgmlType::Q8_0 ? base : GgmlType::Q6_K;
  }
  const int64_t i = layer_of(name), n = m.n_layer;
  const int64_t n_gqa = m.n_head_kv > 0 ? m.n_head / m.n_head_kv : 1;
  if (ends_with(name, "attn_v.weight")) {
    switch (p) {
      case Preset::kQ3_K_M:
        return i < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
      case Preset::kIQ4_NL:
      case Preset::kIQ4_XS:
        return n_gqa >= 4 ? GgmlType::Q5_K : base;
      case Preset::kQ4_K_M:
      case Preset::kQ5_K_M:
        return use_more_bits(i, n) ? GgmlType::Q6_K : base;
      case Preset::kQ4_K_S:
        return i < 4 ? GgmlType::Q5_K : base;
      default:
        return base;
    }
  }
  if (ends_with(name, "ffn_down.weight")) {
    switch (p) {
      case Preset::kQ3_K_M:
        return i < n / 16 ? GgmlType::Q5_K : GgmlType::Q4_K;
      case Preset::kQ4_K_M:
      case Preset::kQ5_K_M:
        return use_more_bits(i, n) ? GgmlType::Q6_K : base;
      case Preset::kIQ4_NL:
      case Preset::kIQ4_XS:
      case Preset::kQ4_K_S:
        return i < n / 8 ? GgmlType::Q5_K : base;
      default:
        return base;
    }
  }
  if (ends_with(name, "attn_output.weight") && p == Preset::kQ3_K_M) return GgmlType::Q4_K;
  return base;
}

// A type whose block divides the row, as llama.cpp falls back: K-quants and IQ4_XS to a
// 32-element type of about the same size (Q3_K to Q4_0, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to
// Q8_0, IQ4_XS to IQ4_NL), then F16 (where llama.cpp gives up).
GgmlType fit_row(GgmlType t, int64_t ne0) {
  if (ne0 % ggml_traits(t).block_elems == 0) return t;
  switch (t) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
      t = GgmlType::Q4_0;
      break;
    case GgmlType::IQ4_XS:
      t = GgmlType::IQ4_NL;
      break;
    case GgmlType::Q4_K:
      t = GgmlType::Q5_0;
      break;
    case GgmlType::Q5_K:
      t = GgmlType::Q5_1;
      break;
    case GgmlType::Q6_K:
      t = GgmlType::Q8_0;
      break;
    default:
      break;
  }
  return ne0 % ggml_traits(t).block_elems == 0 ? t : GgmlType::F16;
}

}  // namespace

std::optional<QuantPreset> quant_preset(std::string_view name) {
  const PresetRow* r = find_row(name);
  if (!r) return std::nullopt;
  return QuantPreset{r->name, r->base, r->file_type};
}

std::string quant_preset_names() {
  std::string out;
  for (const PresetRow& r : kPresets) out += (out.empty() ? "" : ", ") + std::string(r.name);
  return out;
}

std::optional<GgmlType> quant_tensor_type(const QuantPreset& preset, const std::string& name,
                                          int n_dims, int64_t ne0, const QuantModelShape& model) {
  if (n_dims < 2 || !ends_with(name, "weight") || name.find("_norm.weight") != std::string::npos)
    return std::nullopt;
  const PresetRow* r = find_row(preset.name);
  if (!r) return std::nullopt;
  // Float targets take every matrix as it is asked; the mixture rules are for quantized ones.
  if (ggml_traits(r->base).block_elems == 1) return r->base;
  return fit_row(mixture_type(r->id, r->base, name, model, ne0), ne0);
}

}  // namespace duet
