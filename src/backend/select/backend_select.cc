#include "backend/select/backend_select.h"

#include <charconv>

#include "backend/cpu_backend.h"
#include "backend/ref_backend.h"
#include "backend/vulkan/vk_context.h"
#include "backend/vulkan/vulkan_backend.h"

namespace duet {
namespace {

std::string describe_device(const vk::DeviceInfo& d) {
  return d.name + " (" + d.type + ", " + d.driver + ", Vulkan " + d.api_string() + ", " +
         std::to_string(d.device_local_bytes >> 20) + " MiB, features: " + d.features_string() +
         ")";
}

// -1 for "vulkan", N for "vulkan:N", -2 when malformed.
int vulkan_device(const std::string& spec) {
  if (spec == "vulkan") return -1;
  if (spec.rfind("vulkan:", 0) != 0) return -2;
  int n = -1;
  const char* b = spec.data() + 7;
  const char* e = spec.data() + spec.size();
  auto [p, ec] = std::from_chars(b, e, n);
  return (ec == std::errc() && p == e && b != e && n >= 0) ? n : -2;
}

Result<ChosenBackend> make_vulkan(int device) {
  vk::DeviceInfo info;
  auto be = make_vulkan_backend(device, &info);
  if (!be) return be.status();
  return ChosenBackend{std::move(be.value()), "vulkan on " + describe_device(info)};
}

}  // namespace

Status check_backend_spec(const std::string& spec) {
  if (spec == "auto" || spec == "cpu" || spec == "ref" || vulkan_device(spec) >= -1)
    return Status::ok();
  return Status::error("unknown backend '" + spec + "': use " + kBackendHelp);
}

Result<ChosenBackend> make_backend(const std::string& spec, ThreadPool& pool) {
  DUET_TRY(check_backend_spec(spec));
  if (spec == "ref") return ChosenBackend{make_ref_backend(), "ref (scalar reference kernels)"};
  if (spec == "cpu") return ChosenBackend{make_cpu_backend(pool), "cpu"};
  if (spec == "auto") {
    auto devices = vk::list_devices();
    if (devices) {
      for (const vk::DeviceInfo& d : *devices)
        if (d.type == "discrete" || d.type == "integrated" || d.type == "virtual")
          return make_vulkan(-1);
    }
    return ChosenBackend{make_cpu_backend(pool), "cpu (no GPU found through Vulkan)"};
  }
  return make_vulkan(vulkan_device(spec));
}

}  // namespace duet
