// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Start-up of the simulator inside the host process, and vsim_command().
//
// The library constructor runs before main() of the host: it executes the
// VSIM_CONFIG file first, then starts the VSIM_SOCKET server, so a client
// that sees the socket answer also sees the configured devices.
#include "vsim.h"

#include "commands.hpp"
#include "socket_server.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>

namespace {

// A broken test setup must be loud: report and end the host process with
// status 1 (without running its atexit handlers, which never started).
[[noreturn]] void setup_failed()
{
    (void)std::fflush(stderr);
    _exit(1);
}

void run_config(const char *path)
{
    std::ifstream in(path);
    if (!in) {
        (void)std::fprintf(stderr, "vsim: VSIM_CONFIG=%s: cannot open the file\n", path);
        setup_failed();
    }
    std::string line;
    unsigned number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (vsim::is_blank_command(line))
            continue;
        vsim::Reply reply = vsim::run_command(line);
        if (!reply.ok) {
            (void)std::fprintf(stderr, "vsim: %s:%u: %s\nvsim: %s\n", path, number, line.c_str(),
                               reply.line().c_str());
            setup_failed();
        }
    }
}

__attribute__((constructor)) void vsim_start()
{
    // Read once, while the library loads, before any thread of ours exists.
    // NOLINTNEXTLINE(concurrency-mt-unsafe)
    if (const char *config = std::getenv("VSIM_CONFIG"); config && *config)
        run_config(config);
    // NOLINTNEXTLINE(concurrency-mt-unsafe): as above
    if (const char *socket = std::getenv("VSIM_SOCKET"); socket && *socket) {
        std::string error = vsim::start_socket_server(socket);
        if (!error.empty()) {
            (void)std::fprintf(stderr, "vsim: VSIM_SOCKET=%s: %s\n", socket, error.c_str());
            setup_failed();
        }
    }
}

}  // namespace

extern "C" int vsim_command(const char *line, char *reply, size_t reply_len)
{
    vsim::Reply result;
    try {
        result = line ? vsim::run_command(line) : vsim::Reply::failure("NULL command line");
    } catch (const std::bad_alloc &) {
        result = vsim::Reply::failure("out of memory");
    }
    if (reply && reply_len > 0)
        (void)std::snprintf(reply, reply_len, "%s", result.line().c_str());
    return result.ok ? 0 : -1;
}
