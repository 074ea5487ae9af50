// Must not build: `duet run` (the duet_cli_run layer) stands on the host, not on the HTTP
// server, so the server's headers are not on its include path.
#include "server/app.h"
