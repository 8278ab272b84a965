// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Derives what really happened to a port from two successive port queries.
//
// Drivers disagree on event types (mlx5 reports a link returning at INIT as
// PORT_ERR, mlx4 calls every non-down change PORT_ACTIVE, rxe sends
// PORT_ACTIVE twice), so like the kernel's core/cache.c portwatch re-queries
// the port on every event and trusts only the state it reads back.
#pragma once

#include <cstdint>
#include <optional>

namespace portwatch {

// The port's logical state (PortInfo:PortState), driver-independent.
enum class LinkState { Down, Init, Armed, Active };

struct PortSnapshot {
    LinkState state = LinkState::Down;
    uint8_t phys_state = 0;  // PortInfo:PortPhysicalState, 5 = LinkUp
    uint16_t lid = 0;
    uint16_t sm_lid = 0;

    bool link_up() const { return state != LinkState::Down; }
};

enum class Change {
    Initial,     // first time we see the port: nothing to compare with
    None,        // nothing of interest changed
    Attributes,  // same logical state, LID or SM LID changed
    LinkLost,    // was up, now DOWN
    LinkBack,    // was DOWN (or was configured and is back at INIT): link (re)trained
    Progress,    // up and moving on (INIT -> ARMED -> ACTIVE): the SM at work
};

struct Transition {
    std::optional<PortSnapshot> from;
    PortSnapshot to;
    Change change = Change::Initial;
};

// The last known state of one port.
class PortTracker {
public:
    Transition update(const PortSnapshot &now);
    const std::optional<PortSnapshot> &last() const { return last_; }

private:
    std::optional<PortSnapshot> last_;
};

Change classify(const PortSnapshot &from, const PortSnapshot &to);
const char *link_state_name(LinkState state);
const char *change_name(Change change);

}  // namespace portwatch
