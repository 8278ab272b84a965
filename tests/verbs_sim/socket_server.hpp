// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The VSIM_SOCKET control endpoint: a unix stream socket served by one
// background thread, speaking the same command language as vsim_command().
#pragma once

#include <string>

namespace vsim {

// Binds `path` and starts the server thread.  Returns an error message, or
// an empty string on success.  If a live server already answers on `path`
// (e.g. this library got preloaded into vsimctl by a test script), it warns
// and returns success without serving, rather than stealing the socket.
std::string start_socket_server(const std::string &path);

}  // namespace vsim
