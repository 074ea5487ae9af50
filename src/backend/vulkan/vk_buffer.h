// A Vulkan storage buffer and its memory. Host-visible buffers stay mapped (activations
// staged per call, and every buffer on devices whose memory the CPU shares, like lavapipe);
// device-local ones are filled through a staging copy (vk_runner.h).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "backend/vulkan/vk_context.h"
#include "base/status.h"

namespace duet::vk {

enum class Memory {
  kDevice,  // device-local; mapped too when the device offers such memory
  kHost,    // host-visible and coherent, for staging and per-call data
};

// How many buffers have been destroyed so far (by any context): a recorded command buffer
// that names buffers is valid only while none of them went, so the runner forgets its
// recordings when this changes.
uint64_t buffers_destroyed();

class Buffer {
 public:
  Buffer() = default;
  // `bytes` is rounded up to a multiple of 4 (shaders read 32-bit words).
  static Result<Buffer> create(const Context& ctx, size_t bytes, Memory memory);
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept { *this = static_cast<Buffer&&>(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  size_t size() const { return size_; }
  // The mapped bytes, or nullptr when the memory is not host-visible.
  uint8_t* mapped() const { return mapped_; }
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }

 private:
  void reset();
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  size_t size_ = 0;
  uint8_t* mapped_ = nullptr;
};

}  // namespace duet::vk
