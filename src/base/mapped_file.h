// A read-only memory map of a whole file. Weights are used in place from the map:
// loading a model touches only the header pages, and the OS pages weights in on use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"

namespace duet {

class MappedFile {
 public:
  static Result<std::unique_ptr<MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  // Drops the whole pages inside [p, p + n) from this process's resident memory (for data
  // that a faster copy has replaced). They stay readable: a later access reads them back
  // from the page cache.
  void release(const uint8_t* p, size_t n) const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Resident set size of this process in bytes (from /proc/self/statm), for memory checks.
size_t resident_bytes();

}  // namespace duet
