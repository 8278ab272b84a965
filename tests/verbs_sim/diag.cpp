// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// stderr reporting; see diag.hpp for why misuse aborts.
#include "diag.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace vsim {

namespace {

void vreport(const char *prefix, const char *fmt, va_list ap)
{
    // Build the whole line first so concurrent reports do not interleave.
    char msg[512];
    (void)std::vsnprintf(msg, sizeof msg, fmt, ap);
    (void)std::fprintf(stderr, "vsim: %s%s\n", prefix, msg);
}

}  // namespace

void caller_bug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("verbs API misuse (this is a bug in the caller): ", fmt, ap);
    va_end(ap);
    std::abort();
}

void sim_failure(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("simulator failure: ", fmt, ap);
    va_end(ap);
    std::abort();
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning: ", fmt, ap);
    va_end(ap);
}

}  // namespace vsim
