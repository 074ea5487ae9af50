#include "backend/vulkan/vk_context.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define DUET_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DUET_ADDRESS_SANITIZER 1
#endif
#endif

namespace duet::vk {
namespace {

// Under AddressSanitizer only. The Vulkan loader unloads the drivers (and the LLVM that
// lavapipe links) when the last instance is destroyed, and their globals go with them; memory
// that only those globals pointed to (the drivers' one-time initialisation) then looks leaked
// to LeakSanitizer, which reports at exit. Marking every loaded driver "never unload" keeps
// those globals mapped, so LeakSanitizer sees the pointers and reports only real leaks.
void keep_drivers_mapped() {
#ifdef DUET_ADDRESS_SANITIZER
  // The names first, the dlopen calls after: dl_iterate_phdr holds the loader's lock while it
  // calls back, and dlopen takes another in the other order.
  std::vector<std::string> drivers;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (std::strstr(name, "libvulkan_") != nullptr || std::strstr(name, "libLLVM") != nullptr)
          static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &drivers);
  for (const std::string& name : drivers)
    (void)dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // never closed, by intent
#endif
}

// Header-independent: the extension is newer than some distributions' headers.
constexpr const char* kCooperativeMatrixExtension = "VK_KHR_cooperative_matrix";

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

// Lower is preferred by the automatic choice.
int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

Result<VkInstance> create_instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "duet";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&ci, nullptr, &instance);
  if (r != VK_SUCCESS)
    return Status::error("no Vulkan driver could be opened (vkCreateInstance: " + result_name(r) +
                         "); on Debian, `apt-get install mesa-vulkan-drivers` gives a CPU device");
  return instance;
}

// -1 when the device has no queue family with compute.
int compute_queue_family(VkPhysicalDevice pd) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
  // A compute-only family first: on discrete GPUs it runs beside graphics work.
  for (uint32_t i = 0; i < n; ++i)
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
        !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      return static_cast<int>(i);
  for (uint32_t i = 0; i < n; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return static_cast<int>(i);
  return -1;
}

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  return std::any_of(exts.begin(), exts.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

DeviceInfo describe(VkPhysicalDevice pd, uint32_t index) {
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  p11.pNext = &p12;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &p11;
  vkGetPhysicalDeviceProperties2(pd, &props);

  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  const bool dot_ext = props.properties.apiVersion >= VK_API_VERSION_1_3 ||
                       has_extension(pd, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  f11.pNext = &f12;
  if (dot_ext) f12.pNext = &dot;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(pd, &features);

  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);

  DeviceInfo d;
  d.index = index;
  d.name = props.properties.deviceName;
  d.type = type_name(props.properties.deviceType);
  d.driver =
      std::string(p12.driverName) + (p12.driverInfo[0] ? std::string(" ") + p12.driverInfo : "");
  d.api_version = props.properties.apiVersion;
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      d.device_local_bytes = std::max<uint64_t>(d.device_local_bytes, mem.memoryHeaps[i].size);
  d.subgroup_size = p11.subgroupSize;
  d.max_storage_buffer_range = props.properties.limits.maxStorageBufferRange;
  d.min_storage_offset_alignment = props.properties.limits.minStorageBufferOffsetAlignment;
  d.max_shared_memory = props.properties.limits.maxComputeSharedMemorySize;
  d.storage_16bit = f11.storageBuffer16BitAccess;
  d.float16_math = f12.shaderFloat16;
  d.int8_math = f12.shaderInt8;
  d.integer_dot_product = dot_ext && dot.shaderIntegerDotProduct;
  d.subgroup_arithmetic = (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                          (p11.subgroupSupportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  d.cooperative_matrix = has_extension(pd, kCooperativeMatrixExtension);
  return d;
}

struct Candidate {
  VkPhysicalDevice pd;
  DeviceInfo info;
  VkPhysicalDeviceType type;
  int queue_family;
};

std::vector<Candidate> candidates(VkInstance instance) {
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  vkEnumeratePhysicalDevices(instance, &n, pds.data());
  keep_drivers_mapped();  // the loader has loaded them by now
  std::vector<Candidate> out;
  for (uint32_t i = 0; i < n; ++i) {
    VkPhysicalDeviceProperties p{};
    vkGetPhysicalDeviceProperties(pds[i], &p);
    const int family = compute_queue_family(pds[i]);
    if (p.apiVersion < VK_API_VERSION_1_2 || family < 0) continue;
    out.push_back({pds[i], describe(pds[i], i), p.deviceType, family});
  }
  return out;
}

}  // namespace

std::string result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_LAYER_NOT_PRESENT:
      return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
      return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    default:
      return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

std::string DeviceInfo::api_string() const {
  return std::to_string(VK_API_VERSION_MAJOR(api_version)) + "." +
         std::to_string(VK_API_VERSION_MINOR(api_version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(api_version));
}

std::string DeviceInfo::features_string() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(storage_16bit, "fp16-storage");
  add(float16_math, "fp16-math");
  add(int8_math, "int8-math");
  add(integer_dot_product, "int-dot");
  add(subgroup_arithmetic, "subgroup-arith");
  add(cooperative_matrix, "coop-matrix");
  return s.empty() ? "none" : s;
}

Result<std::vector<DeviceInfo>> list_devices() {
  auto instance = create_instance();
  if (!instance) return instance.status();
  std::vector<DeviceInfo> out;
  for (const Candidate& c : candidates(*instance)) out.push_back(c.info);
  vkDestroyInstance(*instance, nullptr);
  return out;
}

Result<std::unique_ptr<Context>> Context::create(int device_index) {
  auto instance = create_instance();
  if (!instance) return instance.status();
  std::unique_ptr<Context> ctx(new Context());
  ctx->instance_ = *instance;  // destroyed by ~Context on every path below
  std::vector<Candidate> all = candidates(ctx->instance_);
  if (all.empty())
    return Status::error(
        "no Vulkan 1.2 device with a compute queue was found (`duet info --devices` lists what "
        "the driver offers; on Debian, `apt-get install mesa-vulkan-drivers` gives a CPU device)");
  const Candidate* chosen = nullptr;
  if (device_index >= 0) {
    for (const Candidate& c : all)
      if (c.info.index == static_cast<uint32_t>(device_index)) chosen = &c;
    if (!chosen)
      return Status::error("there is no Vulkan device " + std::to_string(device_index) +
                           " (`duet info --devices` lists them)");
  } else {
    chosen = &*std::min_element(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
      return type_rank(a.type) < type_rank(b.type);
    });
  }
  ctx->physical_ = chosen->pd;
  ctx->info_ = chosen->info;
  ctx->queue_family_ = static_cast<uint32_t>(chosen->queue_family);
  vkGetPhysicalDeviceMemoryProperties(ctx->physical_, &ctx->memory_);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = ctx->queue_family_;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &q;
  const VkResult r = vkCreateDevice(ctx->physical_, &dci, nullptr, &ctx->device_);
  if (r != VK_SUCCESS)
    return Status::error("cannot open Vulkan device " + ctx->info_.name + ": " + result_name(r));
  vkGetDeviceQueue(ctx->device_, ctx->queue_family_, 0, &ctx->queue_);
  return ctx;
}

Context::~Context() {
  if (device_ != VK_NULL_HANDLE) vkDestroyDevice(device_, nullptr);
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

int Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags wanted) const {
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
    if ((type_bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & wanted) == wanted)
      return static_cast<int>(i);
  return -1;
}

}  // namespace duet::vk
