// Memory that a backend owns — a step's activations, a layer of the KV cache — and the
// views of it that operations take. On a CPU backend the memory is the host's; on a GPU it
// is device memory that only the backend's operations touch, so that a step's values never
// cross to the host between operations.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status.h"

namespace duet {

class BackendBuffer {
 public:
  virtual ~BackendBuffer() = default;
  BackendBuffer(const BackendBuffer&) = delete;
  BackendBuffer& operator=(const BackendBuffer&) = delete;

  size_t bytes() const { return bytes_; }
  // The bytes, where the host can reach them (every buffer of a CPU backend); nullptr for
  // device memory.
  uint8_t* host() const { return host_; }

 protected:
  BackendBuffer(size_t bytes, uint8_t* host) : bytes_(bytes), host_(host) {}

 private:
  size_t bytes_ = 0;
  uint8_t* host_ = nullptr;
};

// `bytes` of host memory, reserved and faulted in as it is first written, so that a KV
// cache's resident memory follows the blocks in use rather than its budget. Zero-filled.
Result<std::unique_ptr<BackendBuffer>> allocate_host_buffer(size_t bytes);

// What an operation reads or writes: a whole backend buffer, or host memory at a pointer
// (tests, tools, and the logits the caller asked for). A pointer converts implicitly, so
// host code passes its arrays as before; a device backend copies those in and out.
template <class T>
struct View {
  BackendBuffer* buffer = nullptr;  // null: plain host memory at `ptr`
  T* ptr = nullptr;                 // the values where the host can reach them, or nullptr

  View() = default;
  View(T* p) : ptr(p) {}  // NOLINT(google-explicit-constructor): host memory
  View(BackendBuffer& b) : buffer(&b), ptr(reinterpret_cast<T*>(b.host())) {}  // NOLINT
  template <class U>
  requires std::convertible_to<U*, T*> View(const View<U>& o)
      : buffer(o.buffer), ptr(o.ptr) {}  // NOLINT: float → const float

  // The values on the host; nullptr for device memory (only its backend's ops reach it).
  T* host() const { return ptr; }
};

using Floats = View<float>;
using ConstFloats = View<const float>;

}  // namespace duet
