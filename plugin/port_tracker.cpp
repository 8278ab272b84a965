// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "port_tracker.hpp"

namespace portwatch {

Change classify(const PortSnapshot &from, const PortSnapshot &to)
{
    if (from.link_up() && !to.link_up())
        return Change::LinkLost;
    if (!from.link_up() && to.link_up())
        return Change::LinkBack;
    // ARMED/ACTIVE back at INIT: the link retrained between two of our
    // queries (its DOWN was too short to see). The SM must configure it again.
    if ((from.state == LinkState::Armed || from.state == LinkState::Active) &&
        to.state == LinkState::Init)
        return Change::LinkBack;
    if (from.state != to.state)
        return Change::Progress;
    if (from.lid != to.lid || from.sm_lid != to.sm_lid)
        return Change::Attributes;
    return Change::None;
}

Transition PortTracker::update(const PortSnapshot &now)
{
    Transition t;
    t.from = last_;
    t.to = now;
    t.change = last_ ? classify(*last_, now) : Change::Initial;
    last_ = now;
    return t;
}

const char *link_state_name(LinkState state)
{
    switch (state) {
    case LinkState::Down:
        return "DOWN";
    case LinkState::Init:
        return "INIT";
    case LinkState::Armed:
        return "ARMED";
    case LinkState::Active:
        return "ACTIVE";
    }
    return "?";  // GCOVR_EXCL_LINE: the switch above names every value
}

const char *change_name(Change change)
{
    switch (change) {
    case Change::Initial:
        return "initial";
    case Change::None:
        return "no change";
    case Change::Attributes:
        return "attributes changed";
    case Change::LinkLost:
        return "link lost";
    case Change::LinkBack:
        return "link back";
    case Change::Progress:
        return "SM configuring the port";
    }
    return "?";  // GCOVR_EXCL_LINE: the switch above names every value
}

}  // namespace portwatch
