// GGUF (versions 2 and 3): a bounds-checked parser over bytes that stay where they
// are (a memory map). Every count, length, offset and shape in the header is checked
// against the bytes that exist before it is used, so a corrupt file produces an error
// naming the problem, never a crash or an allocation larger than the file.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"
#include "gguf/ggml_type.h"

namespace duet {

enum class GgufValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};
const char* gguf_value_type_name(GgufValueType t);

// An array value: its element type, its count, and the (already validated) bytes of its
// elements in the file. Elements are decoded on request, so a 150k-entry vocabulary costs
// nothing until it is used.
struct GgufArray {
  GgufValueType elem_type = GgufValueType::UINT8;
  uint64_t count = 0;
  std::span<const uint8_t> bytes;

  // Each accessor fails (with the reason) if the element type does not fit.
  Result<std::vector<std::string_view>> strings() const;
  Result<std::vector<int64_t>> ints() const;
  Result<std::vector<double>> floats() const;  // accepts integer elements too
};

struct GgufValue {
  GgufValueType type = GgufValueType::UINT8;
  uint64_t u = 0;  // unsigned integers and bool
  int64_t i = 0;   // signed integers
  double f = 0;    // floats
  std::string_view str;
  GgufArray arr;

  std::optional<int64_t> as_int() const;   // any integer type that fits in int64
  std::optional<double> as_float() const;  // float or integer types
  std::optional<bool> as_bool() const;
  std::optional<std::string_view> as_string() const;
  // A short human-readable rendering (arrays summarised) for `duet info`.
  std::string to_display_string(size_t max_items = 8) const;
};

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  int n_dims = 0;
  std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] is the contiguous (row) dimension
  uint64_t offset = 0;                    // relative to the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // into the mapped file

  std::string shape_string() const;  // "[1024, 151936]"
};

struct GgufKeyValue {
  std::string key;
  GgufValue value;
};

class GgufFile {
 public:
  // Parses a GGUF image held in `bytes`; the result refers into `bytes`, which must
  // outlive it. Used directly by the fuzzer and by tests.
  static Result<GgufFile> parse(std::span<const uint8_t> bytes);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const std::vector<GgufKeyValue>& metadata() const { return kv_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }

  const GgufValue* find(std::string_view key) const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;

 private:
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKeyValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
};

// A mapped file plus its parsed header: what a model is loaded from.
class GgufModelFile {
 public:
  static Result<std::shared_ptr<GgufModelFile>> open(const std::string& path);
  const GgufFile& gguf() const { return gguf_; }
  size_t file_size() const { return map_->size(); }
  // See MappedFile::release.
  void release(const uint8_t* p, size_t n) const { map_->release(p, n); }

 private:
  std::unique_ptr<MappedFile> map_;
  GgufFile gguf_;
};

}  // namespace duet
