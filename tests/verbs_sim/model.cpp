// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Driver-style event rules and small formatting helpers for the model types.
#include "model.hpp"

#include <cstdio>

namespace vsim {

Stats &Stats::operator+=(const Stats &o)
{
    opens += o.opens;
    closes += o.closes;
    open_contexts += o.open_contexts;
    events_queued += o.events_queued;
    events_read += o.events_read;
    acks += o.acks;
    unacked_at_close += o.unacked_at_close;
    queries += o.queries;
    return *this;
}

std::string Stats::format() const
{
    char buf[320];
    (void)std::snprintf(
        buf, sizeof buf,
        "opens=%llu closes=%llu open_contexts=%llu events_queued=%llu "
        "events_read=%llu acks=%llu unacked_at_close=%llu queries=%llu",
        static_cast<unsigned long long>(opens), static_cast<unsigned long long>(closes),
        static_cast<unsigned long long>(open_contexts),
        static_cast<unsigned long long>(events_queued),
        static_cast<unsigned long long>(events_read), static_cast<unsigned long long>(acks),
        static_cast<unsigned long long>(unacked_at_close),
        static_cast<unsigned long long>(queries));
    return buf;
}

std::string Reply::line() const
{
    std::string out = ok ? "ok" : "error";
    if (!text.empty())
        out += ' ' + text;
    // One reply is one line, whatever a message happened to contain.
    for (char &c : out)
        if (c == '\n' || c == '\r')
            c = ' ';
    return out;
}

// Which events a port entering `to` produces (the caller only asks when the
// state really changed).  These follow what the kernel drivers report:
//  - mlx5 maps both "link went down" and "link came back but the SM has not
//    activated it yet" (logical INIT) to PORT_ERR, says nothing for ARMED and
//    PORT_ACTIVE for ACTIVE;
//  - mlx4 reports PORT_ERR for DOWN and PORT_ACTIVE for every other change;
//  - rxe (soft RoCE) only knows DOWN and ACTIVE and reports ACTIVE twice
//    (once for the netdev carrier, once for the port), which catches plugins
//    that assume one event per transition.
std::vector<ibv_event_type> state_change_events(Style style, ibv_port_state to)
{
    if (to == IBV_PORT_DOWN)
        return {IBV_EVENT_PORT_ERR};
    switch (style) {
    case Style::mlx5:
        if (to == IBV_PORT_INIT)
            return {IBV_EVENT_PORT_ERR};
        if (to == IBV_PORT_ACTIVE)
            return {IBV_EVENT_PORT_ACTIVE};
        return {};
    case Style::mlx4:
        return {IBV_EVENT_PORT_ACTIVE};
    case Style::rxe:
        if (to == IBV_PORT_ACTIVE)
            return {IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ACTIVE};
        return {};
    }
    return {};
}

bool style_supports_state(Style style, ibv_port_state state)
{
    if (style == Style::rxe)
        return state == IBV_PORT_DOWN || state == IBV_PORT_ACTIVE;
    return state == IBV_PORT_DOWN || state == IBV_PORT_INIT || state == IBV_PORT_ARMED ||
           state == IBV_PORT_ACTIVE;
}

// A logical state implies a physical one unless a test says otherwise: a DOWN
// port is still trying to train (Polling); anything above DOWN has a link.
uint8_t phys_state_for(ibv_port_state state)
{
    return state == IBV_PORT_DOWN ? kPhysPolling : kPhysLinkUp;
}

const char *style_name(Style style)
{
    switch (style) {
    case Style::mlx5:
        return "mlx5";
    case Style::mlx4:
        return "mlx4";
    case Style::rxe:
        return "rxe";
    }
    return "?";
}

}  // namespace vsim
