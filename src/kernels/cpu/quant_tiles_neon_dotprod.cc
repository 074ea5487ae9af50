// The quantized-weight tiles of neon_quant_tiles.h compiled with
// -march=armv8.2-a+dotprod (SDOT); called only when cpu_isa_supported(kNeonDotprod).
#include "kernels/cpu/neon_quant_tiles.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "this file needs its -march flags (CMakeLists.txt)"
#endif

namespace duet::cpu {

void fill_neon_dotprod_quant_kernels(CpuKernels& k) { fill_neon_quant_tiles(k); }

}  // namespace duet::cpu
