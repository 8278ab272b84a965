// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Which port is the watched one, and where it is now.
//
// The watched port is named by portwatch.port: a DEVICE:PORT, a port GUID,
// or (auto) OpenSM's own bound port GUID. A port is identified by its GUID,
// not by the device name it had: a device reset can bring it back as mlx5_3
// where it was mlx5_0. Three answers:
//   found      the port is on an open device: only it is watched;
//   gone       it was found before and its device is not open now: nothing
//              else is watched while the devices are rescanned (another
//              HCA's ports are not OpenSM's);
//   not found  never seen (a GID query failed, OpenSM's GUID is on no verbs
//              port): every InfiniBand port counts as watched meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "devices.hpp"
#include "host.hpp"
#include "options.hpp"

namespace portwatch {

class PortResolver {
public:
    PortResolver(const Host &host, const Options &opts);

    // Looks for the watched port on the open devices; logs when the answer
    // changes. True if it changed.
    bool resolve(Devices &devices);
    // Where the watched port is now; empty while gone or not found.
    const std::optional<PortKey> &watched() const { return found_; }
    // The caller should keep rescanning the devices.
    bool looking() const { return !found_; }
    // While not found every InfiniBand port counts as watched.
    bool is_watched(const PortKey &key, bool infiniband) const;

private:
    // *why: the first failed GID query, as " (the GID query of ... failed: ...)".
    std::optional<PortKey> find_guid(Devices &devices, uint64_t guid, std::string *why) const;
    void log_answer(const std::optional<PortKey> &found, uint64_t guid, const std::string &why);

    const Host &host_;
    PortSpec spec_;
    std::optional<PortKey> found_;
    bool seen_ = false;                          // found at least once (this GUID)
    uint64_t seen_guid_ = 0;                     // the GUID seen_ is about
    std::optional<PortKey> last_place_;          // where it was last found
    std::optional<uint64_t> unresolved_logged_;  // the GUID (0: none) logged as not found
};

}  // namespace portwatch
