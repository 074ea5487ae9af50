#include "kernels/cpu/kernel_table.h"

#include <cassert>

namespace duet::cpu {
namespace {

CpuKernels build(CpuIsa isa) {
  CpuKernels k;
  fill_scalar_kernels(k);
  fill_scalar_attention_kernels(k);
#if defined(__aarch64__)
  if (isa == CpuIsa::kNeon || isa == CpuIsa::kNeonDotprod || isa == CpuIsa::kNeonI8mm) {
    fill_neon_float_kernels(k);
    if (isa == CpuIsa::kNeon) fill_neon_quant_kernels(k);
    if (isa == CpuIsa::kNeonDotprod) fill_neon_dotprod_quant_kernels(k);
    if (isa == CpuIsa::kNeonI8mm) fill_neon_i8mm_quant_kernels(k);
  }
#elif defined(__x86_64__) || defined(__i386__)
  if (isa == CpuIsa::kAvx2) {
    fill_avx2_quant_kernels(k);
    fill_avx2_float_kernels(k);
    fill_avx2_elementwise_kernels(k);
    fill_avx2_attention_kernels(k);
  }
  if (isa == CpuIsa::kAvx512 || isa == CpuIsa::kAvx512Bf16) {
    // The element-wise ops and most attention pieces are a small share of the time: the
    // AVX2 versions serve here too, as do the AVX2 tiles of the formats that have no
    // AVX-512 tile yet (fill_avx512_quant_kernels replaces the others).
    fill_avx2_quant_kernels(k);
    fill_avx2_elementwise_kernels(k);
    fill_avx2_attention_kernels(k);
    fill_avx512_attention_kernels(k);
    fill_avx512_attention_decode_kernels(k);
    fill_avx512_attention_prefill_kernels(k);
    fill_avx512_quant_kernels(k);
    fill_avx512_float_kernels(k, /*bf16_dot=*/isa == CpuIsa::kAvx512Bf16);
    fill_avx512_packed_kernels(k,
                               /*bf16_dot=*/isa == CpuIsa::kAvx512Bf16);  // after the row kernels
  }
#endif
  k.isa = isa;
  return k;
}

}  // namespace

const WeightKernels* CpuKernels::for_type(GgmlType type) const {
  switch (type) {
    case GgmlType::F32:
      return &f32;
    case GgmlType::F16:
      return &f16;
    case GgmlType::BF16:
      return &bf16;
    case GgmlType::Q8_0:
      return &q8_0;
    case GgmlType::Q4_0:
      return &q4_0;
    case GgmlType::Q4_K:
      return &q4_k;
    case GgmlType::Q5_K:
      return &q5_k;
    case GgmlType::Q6_K:
      return &q6_k;
    case GgmlType::Q4_1:
      return &q4_1;
    case GgmlType::Q5_0:
      return &q5_0;
    case GgmlType::Q5_1:
      return &q5_1;
    case GgmlType::IQ4_NL:
      return &iq4_nl;
    case GgmlType::Q2_K:
      return &q2_k;
    case GgmlType::Q3_K:
      return &q3_k;
    case GgmlType::IQ4_XS:
      return &iq4_xs;
    default:
      return nullptr;
  }
}

ConvertRowFn CpuKernels::converter(ActFormat f) const {
  switch (f) {
    case ActFormat::kQ8x32:
      return to_q8x32;
    case ActFormat::kQ8x256:
      return to_q8x256;
    case ActFormat::kBf16:
      return to_bf16;
    case ActFormat::kF32:
      return nullptr;
  }
  return nullptr;
}

const CpuKernels& cpu_kernels(CpuIsa isa) {
  assert(cpu_isa_supported(isa));
  // Built on first use and never changed afterwards.
  // (The other architecture's entries are scalar tables, never handed out.)
  static const CpuKernels tables[] = {build(CpuIsa::kScalar),  build(CpuIsa::kAvx2),
                                      build(CpuIsa::kAvx512),  build(CpuIsa::kAvx512Bf16),
                                      build(CpuIsa::kNeon),    build(CpuIsa::kNeonDotprod),
                                      build(CpuIsa::kNeonI8mm)};
  return tables[static_cast<int>(isa)];
}

}  // namespace duet::cpu
