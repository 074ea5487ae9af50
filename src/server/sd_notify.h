// systemd's readiness protocol (sd_notify(3)) without libsystemd: a service started with
// Type=notify gets NOTIFY_SOCKET, the path of a unix datagram socket (or "@name", a name in the
// abstract namespace), and tells systemd how it is doing by sending one datagram of
// newline-separated assignments there: READY=1 once it serves, STOPPING=1 when it begins to
// stop, STATUS=... for `systemctl status`.
#pragma once

#include <string_view>

#include "base/status.h"

namespace duet {

// Sends `state` to $NOTIFY_SOCKET. Does nothing (and succeeds) when the variable is unset or
// empty: the process was not started by systemd as a notify service.
Status sd_notify(std::string_view state);

}  // namespace duet
