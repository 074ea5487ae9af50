// The Vulkan compute backend: the forward pass's operations as GLSL compute shaders
// (src/kernels/vulkan) on any Vulkan 1.2 device, lavapipe included.
//
// This first version keeps the host-pointer seam of backend.h: weights are uploaded once at
// load, in the file's block layout, but each call stages its activations (and the KV blocks
// its sequences read) into host-visible buffers and waits for the result. Correct on every
// device, and the place the shaders are held to the reference; device-resident activations
// and KV, and recorded command buffers per step shape, come with the device-neutral seam.
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
