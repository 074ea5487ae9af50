#include "gguf/ggml_type.h"

#include <algorithm>
#include <cassert>
#include <cctype>

namespace duet {
namespace {

constexpr GgmlTypeTraits kTraits[] = {
    {GgmlType::F32, "F32", 1, 4, true},       {GgmlType::F16, "F16", 1, 2, true},
    {GgmlType::Q4_0, "Q4_0", 32, 18, true},   {GgmlType::Q4_1, "Q4_1", 32, 20, false},
    {GgmlType::Q5_0, "Q5_0", 32, 22, false},  {GgmlType::Q5_1, "Q5_1", 32, 24, false},
    {GgmlType::Q8_0, "Q8_0", 32, 34, true},   {GgmlType::Q8_1, "Q8_1", 32, 36, false},
    {GgmlType::Q2_K, "Q2_K", 256, 84, false}, {GgmlType::Q3_K, "Q3_K", 256, 110, false},
    {GgmlType::Q4_K, "Q4_K", 256, 144, true}, {GgmlType::Q5_K, "Q5_K", 256, 176, true},
    {GgmlType::Q6_K, "Q6_K", 256, 210, true}, {GgmlType::Q8_K, "Q8_K", 256, 292, false},
    {GgmlType::I8, "I8", 1, 1, false},        {GgmlType::I16, "I16", 1, 2, false},
    {GgmlType::I32, "I32", 1, 4, false},      {GgmlType::I64, "I64", 1, 8, false},
    {GgmlType::F64, "F64", 1, 8, false},      {GgmlType::BF16, "BF16", 1, 2, true},
};

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t raw_type) {
  for (const auto& t : kTraits)
    if (static_cast<uint32_t>(t.type) == raw_type) return t;
  return std::nullopt;
}

const GgmlTypeTraits& ggml_traits(GgmlType type) {
  for (const auto& t : kTraits)
    if (t.type == type) return t;
  assert(false && "GgmlType value outside the table");
  return kTraits[0];
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const auto& t : kTraits)
    if (upper == t.name) return t.type;
  return std::nullopt;
}

}  // namespace duet
