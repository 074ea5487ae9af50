// Turns a tile call with runtime (nr, nt) into one of the register-blocked instantiations
// K::run<NR, NT>. Every ISA file instantiates it only with kernel types from its own
// anonymous namespace, so each instantiation is private to that file and compiled with
// that file's flags.
#pragma once

#include <cstddef>
#include <cstdint>

namespace duet::cpu {

template <typename K, int NR>
void dispatch_tokens(const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, int nt, int64_t cols,
                     float* y, int64_t ldy) {
  if constexpr (NR == 1) {  // single-row tiles take up to kTileMaxSingleRow tokens
    switch (nt) {
      case 5:
        return K::template run<1, 5>(w, ws, x, xs, cols, y, ldy);
      case 6:
        return K::template run<1, 6>(w, ws, x, xs, cols, y, ldy);
      case 7:
        return K::template run<1, 7>(w, ws, x, xs, cols, y, ldy);
      case 8:
        return K::template run<1, 8>(w, ws, x, xs, cols, y, ldy);
      default:
        break;
    }
  }
  switch (nt) {
    case 1:
      return K::template run<NR, 1>(w, ws, x, xs, cols, y, ldy);
    case 2:
      return K::template run<NR, 2>(w, ws, x, xs, cols, y, ldy);
    case 3:
      return K::template run<NR, 3>(w, ws, x, xs, cols, y, ldy);
    default:
      return K::template run<NR, 4>(w, ws, x, xs, cols, y, ldy);
  }
}

// Has the MatmulTileFn signature (kernel_table.h).
template <typename K>
void dispatch_tile(const uint8_t* w, size_t ws, int nr, const uint8_t* x, size_t xs, int nt,
                   int64_t cols, float* y, int64_t ldy) {
  switch (nr) {
    case 1:
      return dispatch_tokens<K, 1>(w, ws, x, xs, nt, cols, y, ldy);
    case 2:
      return dispatch_tokens<K, 2>(w, ws, x, xs, nt, cols, y, ldy);
    case 3:
      return dispatch_tokens<K, 3>(w, ws, x, xs, nt, cols, y, ldy);
    default:
      return dispatch_tokens<K, 4>(w, ws, x, xs, nt, cols, y, ldy);
  }
}

}  // namespace duet::cpu
