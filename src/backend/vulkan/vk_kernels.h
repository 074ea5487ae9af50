// The compute pipelines: one per shader variant (src/kernels/vulkan/*.comp, compiled to
// SPIR-V by glslc at build time and embedded in the binary), created on first use.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "backend/vulkan/vk_context.h"
#include "base/status.h"

namespace duet::vk {

// The embedded SPIR-V of a shader variant ("matmul_q8_0", "rmsnorm"), or an empty span.
std::span<const uint32_t> find_spirv(std::string_view name);

// A pipeline whose descriptor set 0 holds `n_bindings` storage buffers (bindings 0..n-1)
// and whose push constants are `push_bytes` long.
struct Kernel {
  std::string name;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t n_bindings = 0;
  uint32_t push_bytes = 0;
};

class Kernels {
 public:
  explicit Kernels(const Context& ctx) : ctx_(ctx) {}
  ~Kernels();
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;

  Result<const Kernel*> get(std::string_view name, uint32_t n_bindings, uint32_t push_bytes);

 private:
  const Context& ctx_;
  std::map<std::string, Kernel, std::less<>> kernels_;
};

}  // namespace duet::vk
