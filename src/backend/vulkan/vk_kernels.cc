#include "backend/vulkan/vk_kernels.h"

#include <vector>

namespace duet::vk {
namespace {

void destroy(VkDevice d, Kernel& k) {
  if (k.pipeline != VK_NULL_HANDLE) vkDestroyPipeline(d, k.pipeline, nullptr);
  if (k.layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(d, k.layout, nullptr);
  if (k.set_layout != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(d, k.set_layout, nullptr);
}

Status build(VkDevice d, std::span<const uint32_t> spirv, Kernel& k) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(k.n_bindings);
  for (uint32_t i = 0; i < k.n_bindings; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.bindingCount = k.n_bindings;
  sl.pBindings = bindings.data();
  VkResult r = vkCreateDescriptorSetLayout(d, &sl, nullptr, &k.set_layout);
  if (r != VK_SUCCESS) return Status::error("vkCreateDescriptorSetLayout: " + result_name(r));

  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, k.push_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &k.set_layout;
  pl.pushConstantRangeCount = k.push_bytes ? 1 : 0;
  pl.pPushConstantRanges = &push;
  r = vkCreatePipelineLayout(d, &pl, nullptr, &k.layout);
  if (r != VK_SUCCESS) return Status::error("vkCreatePipelineLayout: " + result_name(r));

  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.size_bytes();
  mi.pCode = spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  r = vkCreateShaderModule(d, &mi, nullptr, &module);
  if (r != VK_SUCCESS) return Status::error("vkCreateShaderModule: " + result_name(r));
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.layout = k.layout;
  r = vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &ci, nullptr, &k.pipeline);
  vkDestroyShaderModule(d, module, nullptr);
  if (r != VK_SUCCESS) return Status::error("vkCreateComputePipelines: " + result_name(r));
  return Status::ok();
}

}  // namespace

Kernels::~Kernels() {
  for (auto& [name, k] : kernels_) destroy(ctx_.device(), k);
}

Result<const Kernel*> Kernels::get(std::string_view name, uint32_t n_bindings,
                                   uint32_t push_bytes) {
  if (auto it = kernels_.find(name); it != kernels_.end()) return &it->second;
  const std::span<const uint32_t> spirv = find_spirv(name);
  if (spirv.empty()) return Status::error("no shader named " + std::string(name) + " is built in");
  Kernel k;
  k.name = name;
  k.n_bindings = n_bindings;
  k.push_bytes = push_bytes;
  if (Status s = build(ctx_.device(), spirv, k); !s) {
    destroy(ctx_.device(), k);
    return s.with_context("shader " + std::string(name));
  }
  return &kernels_.emplace(std::string(name), k).first->second;
}

}  // namespace duet::vk
