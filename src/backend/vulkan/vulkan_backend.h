// The Vulkan compute backend: the forward pass's operations as GLSL compute shaders
// (src/kernels/vulkan) on any Vulkan 1.2 device, lavapipe included.
//
// Weights are uploaded once at load, in the file's block layout. The model's activations
// and KV cache are buffers of this backend (device memory), and a forward pass records every
// operation into one command buffer that is submitted once, at the end of the pass:
// per step only token ids, positions and block tables go in and logits come out. Operations
// also take host memory (tests hold each shader to the reference that way): it is copied in
// and out around a submit of its own.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "backend/vulkan/vk_context.h"
#include "base/status.h"

namespace duet {

// device_index < 0: the automatic choice (vk::Context::create). `info`, when given, gets
// what the chosen device is.
Result<std::unique_ptr<Backend>> make_vulkan_backend(int device_index = -1,
                                                     vk::DeviceInfo* info = nullptr);

}  // namespace duet
