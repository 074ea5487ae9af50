// One Vulkan compute device, opened for duet: the instance, the chosen physical device, a
// compute queue, and what the device offers (the optional features the shaders may use,
// its memory, its limits). Everything is plain core Vulkan 1.2, so lavapipe (Mesa's CPU
// implementation, which CI runs), MoltenVK and every desktop driver can open it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace duet::vk {

// What `duet info --devices` and the startup log say about a device.
struct DeviceInfo {
  uint32_t index = 0;  // in the instance's enumeration order (--device N)
  std::string name;
  std::string type;    // discrete, integrated, virtual, cpu, other
  std::string driver;  // driver name and version string
  uint32_t api_version = 0;
  uint64_t device_local_bytes = 0;  // the largest device-local heap
  uint32_t subgroup_size = 0;
  uint64_t max_storage_buffer_range = 0;
  uint64_t min_storage_offset_alignment = 4;  // of a storage buffer binding's offset
  uint32_t max_shared_memory = 0;
  // Optional features (each shader has a path without them).
  bool storage_16bit = false;  // 16-bit values in storage buffers
  bool float16_math = false;   // float16 arithmetic in shaders
  bool int8_math = false;      // int8 arithmetic in shaders
  bool integer_dot_product = false;
  bool subgroup_arithmetic = false;  // subgroupAdd and friends in compute shaders
  bool cooperative_matrix = false;   // VK_KHR_cooperative_matrix (tensor cores / WMMA)

  std::string api_string() const;
  std::string features_string() const;  // "fp16-storage int-dot ..." or "none"
};

// Every Vulkan 1.2 device with a compute queue. An empty list with no error means a
// loader was found but no device; an error means no usable loader/driver at all.
Result<std::vector<DeviceInfo>> list_devices();

class Context {
 public:
  // device_index < 0: the first discrete GPU, else the first integrated one, else any
  // other (a virtual GPU, then a CPU implementation such as lavapipe).
  static Result<std::unique_ptr<Context>> create(int device_index = -1);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  VkDevice device() const { return device_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  // A memory type index with all of `wanted` among those `type_bits` allows, or -1.
  int memory_type(uint32_t type_bits, VkMemoryPropertyFlags wanted) const;

 private:
  Context() = default;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPhysicalDeviceMemoryProperties memory_{};
  DeviceInfo info_;
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and the like, for error messages.
std::string result_name(VkResult r);

}  // namespace duet::vk
