#include "kernels/cpu/cpu_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace duet {

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kScalar:
      return "scalar";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx512Bf16:
      return "avx512bf16";
  }
  return "?";
}

std::optional<CpuIsa> cpu_isa_from_name(std::string_view name) {
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16})
    if (name == cpu_isa_name(isa)) return isa;
  return std::nullopt;
}

bool cpu_isa_supported(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  // Safe even from static initialisers (tests instantiate per-ISA suites there).
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the YMM / ZMM state (XCR0).
  // F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports has no "f16c".
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni");
  switch (isa) {
    case CpuIsa::kScalar:
      return true;
    case CpuIsa::kAvx2:
      return avx2;
    case CpuIsa::kAvx512:
      return avx512;
    case CpuIsa::kAvx512Bf16:
      return avx512 && __builtin_cpu_supports("avx512bf16");
  }
  return false;
#else
  return isa == CpuIsa::kScalar;
#endif
}

CpuIsa best_cpu_isa() {
  static const CpuIsa best = [] {
    const auto all = supported_cpu_isas();
    return all.back();
  }();
  return best;
}

std::vector<CpuIsa> supported_cpu_isas() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16})
    if (cpu_isa_supported(isa)) out.push_back(isa);
  return out;
}

}  // namespace duet
