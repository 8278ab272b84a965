// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The C++ face of struct pw_host: printf-style logging and typed calls.
#pragma once

#include <endian.h>
#include <portwatch/host.h>

#include "clock.hpp"

#include <cstdarg>
#include <cstdint>

namespace portwatch {

class Host {
public:
    explicit Host(const pw_host &callbacks) : cb_(callbacks) {}

    void log(pw_log_level level, const char *fmt, ...) const __attribute__((format(printf, 3, 4)));
    void vlog(pw_log_level level, const char *fmt, va_list args) const
        __attribute__((format(printf, 3, 0)));
    pw_sm_state sm_state() const { return cb_.sm_state(cb_.ctx); }
    // OpenSM's bound port GUID in host byte order; 0 while OpenSM names none.
    uint64_t sm_port_guid() const { return be64toh(cb_.sm_port_guid(cb_.ctx)); }
    // false when OpenSM is exiting and refused.
    bool force_heavy_sweep(bool wake) const { return cb_.force_heavy_sweep(cb_.ctx, wake) == 0; }
    // OpenSM's count of SMPs received (it wraps).
    uint32_t smps_received() const { return cb_.smps_received(cb_.ctx); }
    // false when OpenSM is already exiting.
    bool request_exit() const { return cb_.request_exit(cb_.ctx) == 0; }
    // OpenSM's umad file descriptor, -1 until it has bound its port.
    int mad_fd() const { return cb_.mad_fd(cb_.ctx); }
    // false when OpenSM's ERROR lines were off already.
    bool mute_error_log() const { return cb_.mute_error_log(cb_.ctx) == 0; }
    // false (errno set) when the kernel's kill timer could not be armed.
    bool arm_exit_deadline(Millis after) const
    {
        return cb_.arm_exit_deadline(cb_.ctx, static_cast<uint32_t>(after.count())) == 0;
    }

private:
    pw_host cb_;
};

}  // namespace portwatch
