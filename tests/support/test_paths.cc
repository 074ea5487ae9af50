// The build's default paths for test data. Only this file is compiled with them (they are
// absolute, so they differ in every clone): every other test file's object stays the same
// from clone to clone, and ccache serves it in a fresh clone.
#include "support/test_util.h"

namespace duet::test {

const char* default_golden_dir() { return DUET_GOLDEN_DIR; }
const char* default_tokenizer_dir() { return DUET_DEFAULT_TOKENIZER_DIR; }

}  // namespace duet::test
