// The tensor element types that GGUF files carry, with their block layout.
// Numbering follows the GGUF specification so files written here load elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace duet {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct GgmlTypeTraits {
  GgmlType type;
  const char* name;
  int64_t block_elems;  // elements per block (1 for plain types)
  int64_t block_bytes;  // bytes per block
  bool can_compute;     // duet has a decoder (and matmul) for it
};

// Traits for a raw type id read from a file; nullopt for ids this build does not know.
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t raw_type);
const GgmlTypeTraits& ggml_traits(GgmlType type);
inline const char* ggml_type_name(GgmlType type) { return ggml_traits(type).name; }
// "F32, F16, …": the types duet computes with, for error messages.
std::string ggml_computable_type_names();
// Parses "q8_0", "Q4_K", "bf16" ...; nullopt when unknown.
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// Bytes of one row of n elements; the caller has checked n % block_elems == 0.
inline size_t ggml_row_bytes(GgmlType type, int64_t n) {
  const auto& t = ggml_traits(type);
  return static_cast<size_t>(n / t.block_elems * t.block_bytes);
}

}  // namespace duet
