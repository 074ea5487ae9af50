// Writes GGUF version 3 files: metadata first, tensor records, then tensor data that a
// producer callback supplies one tensor at a time, so multi-gigabyte files are written
// without holding their weights in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_file.h"

namespace duet {

// Little-endian primitives for building GGUF bytes by hand (tests build corrupt files with them).
namespace gguf_bytes {
void put_u8(std::vector<uint8_t>& out, uint8_t v);
void put_u32(std::vector<uint8_t>& out, uint32_t v);
void put_u64(std::vector<uint8_t>& out, uint64_t v);
void put_f32(std::vector<uint8_t>& out, float v);
void put_string(std::vector<uint8_t>& out, const std::string& s);
}  // namespace gguf_bytes

class GgufWriter {
 public:
  void set_alignment(uint32_t alignment) { alignment_ = alignment; }

  void add_u32(const std::string& key, uint32_t v);
  void add_i32(const std::string& key, int32_t v);
  void add_u64(const std::string& key, uint64_t v);
  void add_f32(const std::string& key, float v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  void add_string_array(const std::string& key, const std::vector<std::string>& v);
  void add_i32_array(const std::string& key, const std::vector<int32_t>& v);
  void add_f32_array(const std::string& key, const std::vector<float>& v);
  // A value read from another file, of any type, arrays copied as they were (`duet quantize`
  // carries a model's metadata over this way).
  void add_value(const std::string& key, const GgufValue& v);

  // Declares a tensor; ne[0] is the row length. Returns its index for the producer.
  size_t add_tensor(const std::string& name, GgmlType type, const std::vector<int64_t>& ne);
  size_t tensor_bytes(size_t index) const { return tensors_[index].n_bytes; }
  size_t tensor_count() const { return tensors_.size(); }

  // The header (magic through tensor records), unpadded.
  std::vector<uint8_t> header_bytes() const;

  // Fills `data` with exactly tensor_bytes(index) bytes for tensor `index`.
  using Producer = std::function<Status(size_t index, std::vector<uint8_t>& data)>;
  Status write(const std::string& path, const Producer& produce) const;
  // Whole file into memory (small files, tests).
  Result<std::vector<uint8_t>> to_bytes(const Producer& produce) const;

 private:
  struct TensorRecord {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    uint64_t offset = 0;
    size_t n_bytes = 0;
  };
  uint32_t alignment_ = 32;
  uint64_t kv_count_ = 0;
  std::vector<uint8_t> kv_bytes_;
  std::vector<TensorRecord> tensors_;
  uint64_t data_size_ = 0;
};

}  // namespace duet
