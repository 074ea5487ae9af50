// Records compute work into one command buffer and runs it: dispatches with their buffers
// and push constants, barriers between dependent dispatches, buffer copies. One Runner is
// driven by one thread at a time, like every backend.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <initializer_list>
#include <memory>

#include "backend/vulkan/vk_buffer.h"
#include "backend/vulkan/vk_context.h"
#include "backend/vulkan/vk_kernels.h"
#include "base/status.h"

namespace duet::vk {

// Workgroup counts for `n` groups: x is capped at 65535 (the least every device allows),
// the rest goes to y; shaders compute their group as x + y * gl_NumWorkGroups.x.
struct Groups {
  uint32_t x = 1, y = 1, z = 1;
  static Groups spread(uint64_t n);
};

// What one binding of a dispatch sees: `bytes` of `buffer` from `offset` (a multiple of the
// device's minStorageBufferOffsetAlignment); bytes 0: to the end of the buffer.
struct Binding {
  const Buffer* buffer = nullptr;
  size_t offset = 0;
  size_t bytes = 0;
  Binding(const Buffer* b, size_t offset = 0, size_t bytes = 0)  // NOLINT: a whole buffer
      : buffer(b), offset(offset), bytes(bytes) {}
};

class Runner {
 public:
  // Up to `max_dispatches` dispatches between two submits.
  static Result<std::unique_ptr<Runner>> create(const Context& ctx, uint32_t max_dispatches = 256);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Starts a new recording (the previous one must have been submitted).
  Status begin();
  // `buffers[i]` is bound to binding i of `k`; push holds k.push_bytes bytes.
  Status dispatch(const Kernel& k, std::initializer_list<Binding> buffers, const void* push,
                  Groups groups);
  // Whether another dispatch fits before the next submit.
  bool full() const { return dispatches_ == max_dispatches_; }
  // Later dispatches and copies see what earlier ones wrote.
  void barrier();
  void copy(const Buffer& src, size_t src_offset, const Buffer& dst, size_t dst_offset,
            size_t bytes);
  // Runs what was recorded and waits for it.
  Status submit_and_wait();

 private:
  explicit Runner(const Context& ctx) : ctx_(ctx) {}
  const Context& ctx_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  uint32_t max_dispatches_ = 0;
  uint32_t dispatches_ = 0;
};

}  // namespace duet::vk
