// The fast CPU backend (kernels/cpu): SIMD kernels for this CPU (best_cpu_isa()), work
// spread over `pool`, which must outlive the backend. Like every backend it is driven by
// one thread at a time.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "kernels/cpu/cpu_isa.h"

namespace duet {

class ThreadPool;

std::unique_ptr<Backend> make_cpu_backend(ThreadPool& pool);
// The same on a chosen ISA path (tests, benchmarks). Precondition: cpu_isa_supported(isa).
std::unique_ptr<Backend> make_cpu_backend(ThreadPool& pool, CpuIsa isa);

}  // namespace duet
