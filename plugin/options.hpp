// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// portwatch's options, parsed from OpenSM's event_plugin_options string.
//
// That string is shared by every loaded plugin, so portwatch only claims
// whitespace-separated tokens of the form "portwatch.KEY=VALUE" and ignores
// the rest. Any token of ours that is malformed is an error: the plugin then
// refuses to load rather than run with a configuration the admin did not ask for.
#pragma once

#include <portwatch/host.h>

#include <cstdint>
#include <optional>
#include <string>

#include "clock.hpp"

namespace portwatch {

// Which local port to watch.
struct PortSpec {
    enum class Kind { Auto, DevicePort, Guid };
    Kind kind = Kind::Auto;
    std::string device;  // DevicePort
    unsigned port = 0;   // DevicePort
    uint64_t guid = 0;   // Guid, host byte order

    std::string describe() const;
};

// The SM states in which portwatch acts.
struct SmStateSet {
    bool master = true;
    bool discovering = true;
    bool standby = false;
    bool not_active = false;

    bool contains(pw_sm_state state) const;
    std::string describe() const;
};

// What to do when OpenSM's MAD path is found dead after its device's reset
// (MadPathCheck): ask OpenSM to exit, so that its service manager starts it
// again, or only say that it must be restarted.
enum class OnDeviceReset { Restart, Log };

struct Options {
    PortSpec port;
    Millis holdoff{100};
    bool sweep_on_loss = false;
    SmStateSet act_in;
    Millis retry_max{30000};
    // After a sweep portwatch caused has ended, wait this long, then look at
    // the watched port again (the HCA's view may trail OpenSM's by a moment).
    Millis verify{1000};
    // Heavy sweeps requested again while the link is up but the port stays
    // INIT; 0 turns the check off.
    unsigned verify_tries = 4;
    // Where to keep the Prometheus text file; empty: no metrics. As parsed
    // it may hold %g; pw_core_create expands it (metrics_path) before the
    // load line and the Monitor see it.
    std::string metrics_file;
    OnDeviceReset on_device_reset = OnDeviceReset::Restart;
    // How long after the device's return (and after a heavy sweep started)
    // OpenSM may receive nothing before its MAD path counts as dead.
    Millis reset_check{10000};
    // The first reopen/rescan delay (doubles up to retry_max). Not a user
    // option: tests set it small.
    Millis retry_min{100};

    // One line with every option and its value, for the load log line.
    std::string describe() const;
};

// Either options or one error message naming the offending token.
struct ParsedOptions {
    std::optional<Options> options;
    std::string error;
};

// text may be null (no event_plugin_options line): defaults.
ParsedOptions parse_options(const char *text);

const char *sm_state_name(pw_sm_state state);
const char *on_device_reset_name(OnDeviceReset action);

}  // namespace portwatch
