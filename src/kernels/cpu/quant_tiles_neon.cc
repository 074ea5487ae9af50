// The quantized-weight tiles of neon_quant_tiles.h compiled for baseline Advanced SIMD
// (SMULL/SADALP integer dots): any AArch64 CPU.
#include "kernels/cpu/neon_quant_tiles.h"

namespace duet::cpu {

void fill_neon_quant_kernels(CpuKernels& k) { fill_neon_quant_tiles(k); }

}  // namespace duet::cpu
