// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Diagnostics on stderr.  A simulator that silently tolerates misuse would let
// plugin bugs pass tests that the real library (or real hardware) would expose,
// so misuse of the verbs API ends the process loudly via caller_bug().
#pragma once

#include <string.h>

#include <string>

namespace vsim {

// strerror() for any thread: the socket server runs beside the caller's.
inline std::string errno_text(int err)
{
    char buf[128];
    return ::strerror_r(err, buf, sizeof(buf));
}

// The caller broke the verbs API contract: print why, then abort().
[[noreturn]] void caller_bug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// The simulator itself cannot go on (e.g. out of file descriptors).
[[noreturn]] void sim_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Something the real library tolerates but a test author wants to see.
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace vsim
