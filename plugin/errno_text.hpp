// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The text of an errno value, safe on the event thread: std::strerror may
// hand back a buffer shared with OpenSM's own threads, strerror_r (GNU)
// writes into ours or returns a constant string.
#pragma once

#include <string.h>

#include <string>

namespace portwatch {

inline std::string errno_text(int err)
{
    char buf[128];
    return ::strerror_r(err, buf, sizeof(buf));
}

}  // namespace portwatch
