// The plain scalar backend (kernels/ref): the correctness oracle.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace duet {

std::unique_ptr<Backend> make_ref_backend();

}  // namespace duet
