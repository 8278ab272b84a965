// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Plain data describing the simulated hardware, shared by the registry (which
// owns the state) and the command parser (which builds change requests).
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vsim {

// Which kernel driver's event behaviour a device imitates.  Drivers differ in
// which async events a port state change produces; a plugin that works with
// only one of them is a plugin with a latent bug, so tests can pick.
enum class Style { mlx5, mlx4, rxe };

// PortInfo:PortPhysicalState values the simulator uses by name.
enum : uint8_t { kPhysPolling = 2, kPhysDisabled = 3, kPhysLinkUp = 5 };

struct Port {
    ibv_port_state state = IBV_PORT_ACTIVE;
    uint8_t phys_state = kPhysLinkUp;
    uint16_t lid = 0;
    uint16_t sm_lid = 0;
    uint64_t guid = 0;  // host byte order
    uint8_t link_layer = IBV_LINK_LAYER_INFINIBAND;
};

// Per-device counters reported by the `stats` command.
struct Stats {
    uint64_t opens = 0;
    uint64_t closes = 0;
    uint64_t open_contexts = 0;
    uint64_t events_queued = 0;
    uint64_t events_read = 0;
    uint64_t acks = 0;
    uint64_t unacked_at_close = 0;
    uint64_t queries = 0;

    Stats &operator+=(const Stats &o);
    std::string format() const;  // "opens=N closes=N ..."
};

// One queued async event: what ibv_get_async_event will hand out.
struct Event {
    ibv_event_type type;
    int port;  // 0 for device events
};

// Entry points that the `fail` command can make fail.
enum class Call {
    get_device_list,
    open_device,
    query_device,
    query_port,
    query_gid,
    query_pkey,
    get_async_event,
};
constexpr std::size_t kCallCount = 7;

// The outcome of a control command: "ok [data]" or "error <message>".
struct Reply {
    bool ok = true;
    std::string text;

    static Reply success(std::string data = {}) { return {true, std::move(data)}; }
    static Reply failure(std::string message) { return {false, std::move(message)}; }
    std::string line() const;  // single line, no trailing newline
};

// Parsed `add` command.
struct DeviceSpec {
    std::string name;
    std::optional<uint64_t> node_guid;
    int ports = 1;
    Style style = Style::mlx5;
    ibv_port_state state = IBV_PORT_ACTIVE;
    std::optional<uint16_t> lid;
    bool uevent = true;  // announce it as the kernel does (uevent=no: silently)
};

// Parsed `port` command: only the fields that were given are set.
struct PortChange {
    std::optional<ibv_port_state> state;
    std::optional<uint8_t> phys_state;
    std::optional<uint16_t> lid;
    std::optional<uint16_t> sm_lid;
    std::optional<uint64_t> guid;
    std::optional<uint8_t> link_layer;
    bool quiet = false;
};

// Driver-style rules (model.cpp).
std::vector<ibv_event_type> state_change_events(Style style, ibv_port_state to);
bool style_supports_state(Style style, ibv_port_state state);
uint8_t phys_state_for(ibv_port_state state);
const char *style_name(Style style);

}  // namespace vsim
