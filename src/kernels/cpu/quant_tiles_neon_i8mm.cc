// The quantized-weight tiles of neon_quant_tiles.h compiled with
// -march=armv8.2-a+dotprod+i8mm (SMMLA, SDOT); called only when cpu_isa_supported(kNeonI8mm).
#include "kernels/cpu/neon_quant_tiles.h"

#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "this file needs its -march flags (CMakeLists.txt)"
#endif

namespace duet::cpu {

void fill_neon_i8mm_quant_kernels(CpuKernels& k) { fill_neon_quant_tiles(k); }

}  // namespace duet::cpu
