// Must not build: the thinking-mode policy (text/mode) sits below the API layer, so the API's
// headers are not on its include path. tests/CMakeLists (layering.*) expects this failure.
#include "api/request_model.h"
