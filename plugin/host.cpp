// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "host.hpp"

#include <cstdarg>
#include <cstdio>

namespace portwatch {

void Host::log(pw_log_level level, const char *fmt, ...) const
{
    va_list args;
    va_start(args, fmt);
    vlog(level, fmt, args);
    va_end(args);
}

void Host::vlog(pw_log_level level, const char *fmt, va_list args) const
{
    char line[512];  // longer lines are truncated, never overflowed
    (void)std::vsnprintf(line, sizeof(line), fmt, args);
    cb_.log(cb_.ctx, level, line);
}

}  // namespace portwatch
