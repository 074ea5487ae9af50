#include "cli/common/build_info.h"

#include "kernels/cpu/cpu_isa.h"

// DUET_VERSION, DUET_COMMIT and DUET_BUILD_TYPE, written by CMake at configure time (it
// configures again when the checkout's HEAD moves).
#include "cli/build_info.inc"

namespace duet::cli {

std::string version_text() {
  std::string text = "duet " DUET_VERSION " (commit " DUET_COMMIT ", " DUET_BUILD_TYPE " build)\n";
#if defined(__x86_64__)
  text += "CPU kernels: x86-64 scalar, avx2, avx512, avx512bf16; picked at run time";
#elif defined(__aarch64__)
  text += "CPU kernels: aarch64 scalar, neon, neondotprod, neoni8mm; picked at run time";
#else
  text += "CPU kernels: scalar";
#endif
  text += "\nthis CPU runs:";
  for (CpuIsa isa : supported_cpu_isas()) text += std::string(" ") + cpu_isa_name(isa);
#if defined(DUET_WITH_VULKAN)
  text += "\nGPU backends: vulkan";
#else
  text += "\nGPU backends: none";
#endif
  return text;
}

}  // namespace duet::cli
