#include "backend/backend_buffer.h"

#include <sys/mman.h>

#include <string>

namespace duet {
namespace {

class HostBuffer final : public BackendBuffer {
 public:
  HostBuffer(size_t bytes, uint8_t* p, size_t mapped) : BackendBuffer(bytes, p), mapped_(mapped) {}
  ~HostBuffer() override {
    if (host() != nullptr) munmap(host(), mapped_);
  }

 private:
  size_t mapped_;
};

}  // namespace

Result<std::unique_ptr<BackendBuffer>> allocate_host_buffer(size_t bytes) {
  const size_t mapped = bytes == 0 ? 1 : bytes;  // mmap refuses a length of zero
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return Status::error("cannot reserve " + std::to_string(bytes >> 20) + " MiB of memory");
  return std::unique_ptr<BackendBuffer>(
      std::make_unique<HostBuffer>(bytes, static_cast<uint8_t*>(p), mapped));
}

}  // namespace duet
