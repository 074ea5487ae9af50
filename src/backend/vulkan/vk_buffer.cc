#include "backend/vulkan/vk_buffer.h"

#include <atomic>
#include <utility>

namespace duet::vk {

Result<Buffer> Buffer::create(const Context& ctx, size_t bytes, Memory memory) {
  Buffer b;
  b.device_ = ctx.device();
  b.size_ = (std::max<size_t>(bytes, 4) + 3) & ~size_t{3};
  if (b.size_ > ctx.info().max_storage_buffer_range)
    return Status::error("a buffer of " + std::to_string(b.size_ >> 20) + " MiB exceeds what " +
                         ctx.info().name + " can bind at once (" +
                         std::to_string(ctx.info().max_storage_buffer_range >> 20) + " MiB)");
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = b.size_;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
              VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(b.device_, &bci, nullptr, &b.buffer_);
  if (r != VK_SUCCESS) return Status::error("vkCreateBuffer: " + result_name(r));
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(b.device_, b.buffer_, &req);
  int type = -1;
  if (memory == Memory::kDevice) {
    // Device-local and mapped where the device shares memory with the CPU (integrated
    // GPUs, resizable BAR, lavapipe): then no staging copy is needed.
    type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                                   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (type < 0) type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  } else {
    type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                                   VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (type < 0)
      type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  }
  if (type < 0) return Status::error("the device offers no suitable memory type for a buffer");
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = vkAllocateMemory(b.device_, &mai, nullptr, &b.memory_);
  if (r != VK_SUCCESS)
    return Status::error("cannot allocate " + std::to_string(req.size >> 20) + " MiB on " +
                         ctx.info().name + ": " + result_name(r));
  vkBindBufferMemory(b.device_, b.buffer_, b.memory_, 0);
  VkMemoryPropertyFlags flags = 0;
  VkPhysicalDeviceMemoryProperties props{};
  vkGetPhysicalDeviceMemoryProperties(ctx.physical_device(), &props);
  flags = props.memoryTypes[type].propertyFlags;
  if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    void* p = nullptr;
    r = vkMapMemory(b.device_, b.memory_, 0, VK_WHOLE_SIZE, 0, &p);
    if (r != VK_SUCCESS) return Status::error("vkMapMemory: " + result_name(r));
    b.mapped_ = static_cast<uint8_t*>(p);
  }
  return b;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = std::exchange(o.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, nullptr);
  }
  return *this;
}

namespace {
std::atomic<uint64_t> destroyed{0};
}  // namespace

uint64_t buffers_destroyed() { return destroyed.load(std::memory_order_relaxed); }

void Buffer::reset() {
  if (buffer_ != VK_NULL_HANDLE) {
    vkDestroyBuffer(device_, buffer_, nullptr);
    destroyed.fetch_add(1, std::memory_order_relaxed);
  }
  if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);  // unmaps too
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  size_ = 0;
}

}  // namespace duet::vk
