#include "kernels/cpu/cpu_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace duet {
namespace {

constexpr CpuIsa kEveryIsa[] = {CpuIsa::kScalar,     CpuIsa::kAvx2, CpuIsa::kAvx512,
                                CpuIsa::kAvx512Bf16, CpuIsa::kNeon, CpuIsa::kNeonDotprod,
                                CpuIsa::kNeonI8mm};

}  // namespace

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
    case CpuIsa::kNeon:
      return "neon";
    case CpuIsa::kNeonDotprod:
      return "neondotprod";
    case CpuIsa::kNeonI8mm:
      return "neoni8mm";
  }
  return "?";
}

std::optional<CpuIsa> cpu_isa_from_name(std::string_view name) {
  for (CpuIsa isa : kEveryIsa)
    if (name == cpu_isa_name(isa)) return isa;
  return std::nullopt;
}

bool cpu_isa_supported(CpuIsa isa) {
  if (isa == CpuIsa::kScalar) return true;
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
    case CpuIsa::kAvx2:
      return avx2;
    case CpuIsa::kAvx512:
      return avx512;
    case CpuIsa::kAvx512Bf16:
      return avx512 && __builtin_cpu_supports("avx512bf16");
    default:
      return false;
  }
#elif defined(__aarch64__) && defined(__linux__)
  // The kernel's HWCAP bits (<asm/hwcap.h>), which also hold under qemu-user (QEMU_CPU).
  constexpr unsigned long kAsimd = 1ul << 1, kAsimdDp = 1ul << 20;  // AT_HWCAP
  constexpr unsigned long kI8mm = 1ul << 13;                        // AT_HWCAP2
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  const bool neon = (hwcap & kAsimd) != 0;
  const bool dotprod = neon && (hwcap & kAsimdDp) != 0;
  switch (isa) {
    case CpuIsa::kNeon:
      return neon;
    case CpuIsa::kNeonDotprod:
      return dotprod;
    case CpuIsa::kNeonI8mm:
      return dotprod && (hwcap2 & kI8mm) != 0;
    default:
      return false;
  }
#else
  return false;
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
  for (CpuIsa isa : all_cpu_isas())
    if (cpu_isa_supported(isa)) out.push_back(isa);
  return out;
}

std::vector<CpuIsa> all_cpu_isas() {
#if defined(__aarch64__)
  return {CpuIsa::kScalar, CpuIsa::kNeon, CpuIsa::kNeonDotprod, CpuIsa::kNeonI8mm};
#elif defined(__x86_64__) || defined(__i386__)
  return {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16};
#else
  return {CpuIsa::kScalar};
#endif
}

}  // namespace duet
