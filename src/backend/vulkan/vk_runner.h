// Runs compute work: dispatches with their buffers and push constants, barriers between
// dependent dispatches, buffer copies. The work between begin() and submit_and_wait() is
// kept as a list of commands; a list equal to one recorded before (a decode step of the
// same shape: the same kernels over the same buffers, only the data in them differs) runs
// that command buffer again instead of recording a new one, so a steady decode records
// nothing and allocates nothing. One Runner is driven by one thread at a time, like every
// backend.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

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
  bool operator==(const Groups&) const = default;
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
  static Result<std::unique_ptr<Runner>> create(const Context& ctx);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Starts a new list of commands (the previous one must have been submitted).
  void begin();
  // `buffers[i]` is bound to binding i of `k`; push holds k.push_bytes bytes.
  Status dispatch(const Kernel& k, std::initializer_list<Binding> buffers, const void* push,
                  Groups groups);
  // Later dispatches and copies see what earlier ones wrote.
  void barrier();
  void copy(const Buffer& src, size_t src_offset, const Buffer& dst, size_t dst_offset,
            size_t bytes);
  // Runs the list (recorded now, or the same list's command buffer from before) and waits.
  Status submit_and_wait();

  // How many lists were recorded and how many ran a recording again (for tests).
  uint64_t recorded() const { return recorded_; }
  uint64_t reused() const { return reused_; }

 private:
  static constexpr uint32_t kMaxBindings = 8;
  static constexpr uint32_t kMaxPush = 64;
  // Recordings kept: a serving engine's steady shapes (decode at each batch size, a
  // prefill chunk size) fit; the least recently used one goes first.
  static constexpr size_t kKept = 16;

  struct Command {
    enum class Kind : uint8_t { kDispatch, kBarrier, kCopy } kind = Kind::kBarrier;
    const Kernel* kernel = nullptr;
    uint32_t n_bindings = 0;
    std::array<VkBuffer, kMaxBindings> buffers{};
    std::array<VkDeviceSize, kMaxBindings> offsets{}, ranges{};
    std::array<uint8_t, kMaxPush> push{};
    Groups groups;
    bool operator==(const Command&) const = default;
  };
  struct Recording {
    std::vector<Command> commands;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    uint64_t last_used = 0;
  };

  explicit Runner(const Context& ctx) : ctx_(ctx) {}
  Result<Recording*> record();
  void release(Recording& r);

  const Context& ctx_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<Command> pending_;
  std::vector<std::unique_ptr<Recording>> kept_;
  uint64_t kept_for_ = 0;  // buffers_destroyed() when kept_ was last valid
  uint64_t clock_ = 0;
  uint64_t recorded_ = 0, reused_ = 0;
};

}  // namespace duet::vk
