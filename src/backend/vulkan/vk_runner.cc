#include "backend/vulkan/vk_runner.h"

#include <algorithm>
#include <vector>

namespace duet::vk {
namespace {
// The most storage buffers one shader binds.
constexpr uint32_t kMaxBindings = 8;
}  // namespace

Groups Groups::spread(uint64_t n) {
  constexpr uint64_t kMaxX = 65535;
  Groups g;
  g.x = static_cast<uint32_t>(std::clamp<uint64_t>(n, 1, kMaxX));
  g.y = static_cast<uint32_t>((n + g.x - 1) / g.x);
  if (g.y == 0) g.y = 1;
  return g;
}

Result<std::unique_ptr<Runner>> Runner::create(const Context& ctx, uint32_t max_dispatches) {
  std::unique_ptr<Runner> r(new Runner(ctx));
  r->max_dispatches_ = max_dispatches;
  VkDevice d = ctx.device();
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = ctx.queue_family();
  VkResult res = vkCreateCommandPool(d, &pci, nullptr, &r->pool_);
  if (res != VK_SUCCESS) return Status::error("vkCreateCommandPool: " + result_name(res));
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = r->pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  res = vkAllocateCommandBuffers(d, &cai, &r->cmd_);
  if (res != VK_SUCCESS) return Status::error("vkAllocateCommandBuffers: " + result_name(res));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  res = vkCreateFence(d, &fci, nullptr, &r->fence_);
  if (res != VK_SUCCESS) return Status::error("vkCreateFence: " + result_name(res));
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, max_dispatches * kMaxBindings};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = max_dispatches;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  res = vkCreateDescriptorPool(d, &dpi, nullptr, &r->descriptors_);
  if (res != VK_SUCCESS) return Status::error("vkCreateDescriptorPool: " + result_name(res));
  return r;
}

Runner::~Runner() {
  VkDevice d = ctx_.device();
  if (descriptors_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(d, descriptors_, nullptr);
  if (fence_ != VK_NULL_HANDLE) vkDestroyFence(d, fence_, nullptr);
  if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(d, pool_, nullptr);  // frees cmd_
}

Status Runner::begin() {
  vkResetDescriptorPool(ctx_.device(), descriptors_, 0);
  dispatches_ = 0;
  vkResetCommandBuffer(cmd_, 0);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  const VkResult r = vkBeginCommandBuffer(cmd_, &bi);
  if (r != VK_SUCCESS) return Status::error("vkBeginCommandBuffer: " + result_name(r));
  return Status::ok();
}

Status Runner::dispatch(const Kernel& k, std::initializer_list<Binding> buffers, const void* push,
                        Groups groups) {
  if (buffers.size() != k.n_bindings || k.n_bindings > kMaxBindings)
    return Status::error("shader " + k.name + " takes " + std::to_string(k.n_bindings) +
                         " buffers, not " + std::to_string(buffers.size()));
  if (dispatches_ == max_dispatches_)
    return Status::error("more than " + std::to_string(max_dispatches_) + " dispatches recorded");
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = descriptors_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &k.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  const VkResult r = vkAllocateDescriptorSets(ctx_.device(), &ai, &set);
  if (r != VK_SUCCESS) return Status::error("vkAllocateDescriptorSets: " + result_name(r));
  VkDescriptorBufferInfo infos[kMaxBindings];
  VkWriteDescriptorSet writes[kMaxBindings];
  uint32_t i = 0;
  for (const Binding& b : buffers) {
    infos[i] = {b.buffer->handle(), b.offset, b.bytes == 0 ? VK_WHOLE_SIZE : b.bytes};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    ++i;
  }
  vkUpdateDescriptorSets(ctx_.device(), i, writes, 0, nullptr);
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &set, 0, nullptr);
  if (k.push_bytes)
    vkCmdPushConstants(cmd_, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k.push_bytes, push);
  vkCmdDispatch(cmd_, groups.x, groups.y, groups.z);
  ++dispatches_;
  return Status::ok();
}

void Runner::barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Runner::copy(const Buffer& src, size_t src_offset, const Buffer& dst, size_t dst_offset,
                  size_t bytes) {
  const VkBufferCopy region{src_offset, dst_offset, bytes};
  vkCmdCopyBuffer(cmd_, src.handle(), dst.handle(), 1, &region);
}

Status Runner::submit_and_wait() {
  // What the host wrote into mapped memory is visible to the device at submit; what the
  // device wrote becomes visible to the host through this barrier and the fence.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  VkResult r = vkEndCommandBuffer(cmd_);
  if (r != VK_SUCCESS) return Status::error("vkEndCommandBuffer: " + result_name(r));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  r = vkQueueSubmit(ctx_.queue(), 1, &si, fence_);
  if (r != VK_SUCCESS) return Status::error("vkQueueSubmit: " + result_name(r));
  r = vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, UINT64_MAX);
  vkResetFences(ctx_.device(), 1, &fence_);
  if (r != VK_SUCCESS) return Status::error("vkWaitForFences: " + result_name(r));
  return Status::ok();
}

}  // namespace duet::vk
