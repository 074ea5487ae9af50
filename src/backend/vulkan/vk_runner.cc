#include "backend/vulkan/vk_runner.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace duet::vk {

Groups Groups::spread(uint64_t n) {
  constexpr uint64_t kMaxX = 65535;
  Groups g;
  g.x = static_cast<uint32_t>(std::clamp<uint64_t>(n, 1, kMaxX));
  g.y = static_cast<uint32_t>((n + g.x - 1) / g.x);
  if (g.y == 0) g.y = 1;
  return g;
}

Result<std::unique_ptr<Runner>> Runner::create(const Context& ctx) {
  std::unique_ptr<Runner> r(new Runner(ctx));
  VkDevice d = ctx.device();
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = ctx.queue_family();
  VkResult res = vkCreateCommandPool(d, &pci, nullptr, &r->pool_);
  if (res != VK_SUCCESS) return Status::error("vkCreateCommandPool: " + result_name(res));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  res = vkCreateFence(d, &fci, nullptr, &r->fence_);
  if (res != VK_SUCCESS) return Status::error("vkCreateFence: " + result_name(res));
  r->kept_for_ = buffers_destroyed();
  return r;
}

Runner::~Runner() {
  for (auto& k : kept_) release(*k);
  VkDevice d = ctx_.device();
  if (fence_ != VK_NULL_HANDLE) vkDestroyFence(d, fence_, nullptr);
  if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(d, pool_, nullptr);
}

void Runner::release(Recording& r) {
  if (r.descriptors != VK_NULL_HANDLE)
    vkDestroyDescriptorPool(ctx_.device(), r.descriptors, nullptr);
  if (r.cmd != VK_NULL_HANDLE) vkFreeCommandBuffers(ctx_.device(), pool_, 1, &r.cmd);
  r.descriptors = VK_NULL_HANDLE;
  r.cmd = VK_NULL_HANDLE;
}

void Runner::begin() { pending_.clear(); }

Status Runner::dispatch(const Kernel& k, std::initializer_list<Binding> buffers, const void* push,
                        Groups groups) {
  if (buffers.size() != k.n_bindings || k.n_bindings > kMaxBindings)
    return Status::error("shader " + k.name + " takes " + std::to_string(k.n_bindings) +
                         " buffers, not " + std::to_string(buffers.size()));
  if (k.push_bytes > kMaxPush)
    return Status::error("shader " + k.name + " takes more push constants than the runner holds");
  Command& c = pending_.emplace_back();
  c.kind = Command::Kind::kDispatch;
  c.kernel = &k;
  c.n_bindings = k.n_bindings;
  uint32_t i = 0;
  for (const Binding& b : buffers) {
    c.buffers[i] = b.buffer->handle();
    c.offsets[i] = b.offset;
    c.ranges[i] = b.bytes == 0 ? VK_WHOLE_SIZE : b.bytes;
    ++i;
  }
  if (k.push_bytes) std::memcpy(c.push.data(), push, k.push_bytes);
  c.groups = groups;
  return Status::ok();
}

void Runner::barrier() {
  if (!pending_.empty() && pending_.back().kind == Command::Kind::kBarrier) return;
  pending_.emplace_back().kind = Command::Kind::kBarrier;
}

void Runner::copy(const Buffer& src, size_t src_offset, const Buffer& dst, size_t dst_offset,
                  size_t bytes) {
  Command& c = pending_.emplace_back();
  c.kind = Command::Kind::kCopy;
  c.buffers[0] = src.handle();
  c.buffers[1] = dst.handle();
  c.offsets[0] = src_offset;
  c.offsets[1] = dst_offset;
  c.ranges[0] = bytes;
}

// A command buffer and descriptor sets for pending_, kept for the next equal list.
Result<Runner::Recording*> Runner::record() {
  VkDevice d = ctx_.device();
  if (kept_.size() == kKept) {  // the least recently used goes
    auto oldest = std::min_element(kept_.begin(), kept_.end(), [](const auto& a, const auto& b) {
      return a->last_used < b->last_used;
    });
    release(**oldest);
    kept_.erase(oldest);
  }
  auto r = std::make_unique<Recording>();
  uint32_t sets = 0, descriptors = 0;
  for (const Command& c : pending_)
    if (c.kind == Command::Kind::kDispatch) {
      ++sets;
      descriptors += c.n_bindings;
    }
  if (sets > 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = sets;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &size;
    const VkResult res = vkCreateDescriptorPool(d, &dpi, nullptr, &r->descriptors);
    if (res != VK_SUCCESS) return Status::error("vkCreateDescriptorPool: " + result_name(res));
  }
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkResult res = vkAllocateCommandBuffers(d, &cai, &r->cmd);
  if (res != VK_SUCCESS) {
    release(*r);
    return Status::error("vkAllocateCommandBuffers: " + result_name(res));
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  res = vkBeginCommandBuffer(r->cmd, &bi);
  if (res != VK_SUCCESS) {
    release(*r);
    return Status::error("vkBeginCommandBuffer: " + result_name(res));
  }
  const VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  for (const Command& c : pending_) {
    if (c.kind == Command::Kind::kBarrier) {
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      vkCmdPipelineBarrier(r->cmd, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    } else if (c.kind == Command::Kind::kCopy) {
      const VkBufferCopy region{c.offsets[0], c.offsets[1], c.ranges[0]};
      vkCmdCopyBuffer(r->cmd, c.buffers[0], c.buffers[1], 1, &region);
    } else {
      const Kernel& k = *c.kernel;
      VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      ai.descriptorPool = r->descriptors;
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &k.set_layout;
      VkDescriptorSet set = VK_NULL_HANDLE;
      res = vkAllocateDescriptorSets(d, &ai, &set);
      if (res != VK_SUCCESS) {
        release(*r);
        return Status::error("vkAllocateDescriptorSets: " + result_name(res));
      }
      VkDescriptorBufferInfo infos[kMaxBindings];
      VkWriteDescriptorSet writes[kMaxBindings];
      for (uint32_t i = 0; i < c.n_bindings; ++i) {
        infos[i] = {c.buffers[i], c.offsets[i], c.ranges[i]};
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
      }
      vkUpdateDescriptorSets(d, c.n_bindings, writes, 0, nullptr);
      vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
      vkCmdBindDescriptorSets(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &set, 0,
                              nullptr);
      if (k.push_bytes)
        vkCmdPushConstants(r->cmd, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k.push_bytes,
                           c.push.data());
      vkCmdDispatch(r->cmd, c.groups.x, c.groups.y, c.groups.z);
    }
  }
  // What the host wrote into mapped memory is visible to the device at submit; what the
  // device wrote becomes visible to the host through this barrier and the fence.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(r->cmd, stages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                       nullptr);
  res = vkEndCommandBuffer(r->cmd);
  if (res != VK_SUCCESS) {
    release(*r);
    return Status::error("vkEndCommandBuffer: " + result_name(res));
  }
  r->commands = pending_;
  ++recorded_;
  kept_.push_back(std::move(r));
  return kept_.back().get();
}

Status Runner::submit_and_wait() {
  if (pending_.empty()) return Status::ok();
  // A kept recording may name a buffer that is gone (its handle perhaps reused since).
  if (buffers_destroyed() != kept_for_) {
    for (auto& k : kept_) release(*k);
    kept_.clear();
    kept_for_ = buffers_destroyed();
  }
  Recording* r = nullptr;
  for (auto& k : kept_)
    if (k->commands == pending_) {
      r = k.get();
      ++reused_;
      break;
    }
  if (!r) {
    auto made = record();
    if (!made) return made.status();
    r = *made;
  }
  r->last_used = ++clock_;
  pending_.clear();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &r->cmd;
  VkResult res = vkQueueSubmit(ctx_.queue(), 1, &si, fence_);
  if (res != VK_SUCCESS) return Status::error("vkQueueSubmit: " + result_name(res));
  res = vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, UINT64_MAX);
  vkResetFences(ctx_.device(), 1, &fence_);
  if (res != VK_SUCCESS) return Status::error("vkWaitForFences: " + result_name(res));
  return Status::ok();
}

}  // namespace duet::vk
