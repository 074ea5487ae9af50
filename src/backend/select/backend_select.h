// The --backend flag of serve, run, logits and bench engine: which backend computes.
//   auto      a GPU through Vulkan when one is present (discrete, integrated or virtual),
//             else the CPU backend; a Vulkan CPU implementation (lavapipe) is never chosen
//             automatically, the CPU backend being far faster on the same cores
//   cpu       the SIMD CPU backend
//   vulkan    the Vulkan backend on the automatic device choice; vulkan:N on device N
//             (`duet info --devices` lists them)
//   ref       the scalar reference kernels (debugging, tests)
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "base/status.h"

namespace duet {

class ThreadPool;

inline constexpr const char* kBackendHelp =
    "auto (a GPU through Vulkan when present, else cpu), cpu, vulkan, vulkan:N (device N of "
    "`duet info --devices`) or ref (scalar reference)";

struct ChosenBackend {
  std::unique_ptr<Backend> backend;
  std::string description;  // for the startup log: which backend, and for a GPU which device
};

// `pool` serves the CPU backend and must outlive it. An unknown spec or an unusable device
// is an error that says what is available.
Result<ChosenBackend> make_backend(const std::string& spec, ThreadPool& pool);

// Whether `spec` is well formed (for flag validation before anything loads).
Status check_backend_spec(const std::string& spec);

}  // namespace duet
