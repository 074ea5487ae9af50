// The instruction-set paths of the fast CPU kernels, and which of them this CPU runs.
// The binary is built for baseline x86-64 (or baseline ARMv8-A); ISA-specific code lives in
// *_avx2.cc and *_avx512.cc files (x86-64) or *_neon*.cc files (AArch64) compiled with their
// own flags and is only called after the check here.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace duet {

enum class CpuIsa {
  kScalar,      // portable C++, any CPU
  kAvx2,        // AVX2 + FMA + F16C: maddubs integer dots, 8-wide FMA
  kAvx512,      // AVX-512 F/BW/VL + VNNI: VPDPBUSD / VPDPWSSD integer dots, 16-wide FMA
  kAvx512Bf16,  // kAvx512 plus AVX512_BF16: VDPBF16PS for BF16 weights
  // AArch64 (Advanced SIMD is part of every ARMv8-A CPU):
  kNeon,         // 4-wide FMA, SMULL/SADALP integer dots
  kNeonDotprod,  // kNeon plus the dot-product extension: SDOT integer dots
  kNeonI8mm,     // kNeonDotprod plus the int8 matrix multiply: SMMLA on 2 rows × 2 tokens
};

const char* cpu_isa_name(CpuIsa isa);
std::optional<CpuIsa> cpu_isa_from_name(std::string_view name);

// Whether this CPU (and OS) can run the path.
bool cpu_isa_supported(CpuIsa isa);
// The fastest supported path; detected once.
CpuIsa best_cpu_isa();
// Every supported path, slowest first.
std::vector<CpuIsa> supported_cpu_isas();
// Every path of this build's architecture (scalar first), supported here or not: what the
// tests run through (each skips the paths this CPU lacks).
std::vector<CpuIsa> all_cpu_isas();

}  // namespace duet
