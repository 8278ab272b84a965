// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What portwatch exposes to a monitoring system, and its text in the
// Prometheus exposition format (node_exporter's textfile collector reads it).
// Pure data and a pure function: the event thread fills a snapshot, and the
// file is rewritten only when the snapshot differs from the one last written.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace portwatch {

// Seconds from a port event to a stage of the sweep it caused.
struct ReactionHistogram {
    // Upper bounds in seconds, 1 ms to 60 s; +Inf is implied.
    static constexpr std::array<double, 15> kBounds{
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0};
    // buckets[i]: observations <= kBounds[i] and > kBounds[i - 1] (not cumulative).
    std::array<uint64_t, kBounds.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;

    void observe(double seconds);
    bool operator==(const ReactionHistogram &other) const;
};

// The stages, in the order of the histogram array and of pw_report.
enum class Stage { HeavySweepStart, HeavySweepDone, SubnetUp };
constexpr size_t kStages = 3;
const char *stage_label(Stage stage);

struct MetricsSnapshot {
    std::string version;      // portwatch's
    std::string osm_version;  // "OpenSM 3.3.23"
    // OpenSM's port (the instance: a label on every sample), else the
    // watched port's; host order, 0 while unknown.
    uint64_t port_guid = 0;
    // The watched port; empty device while none is resolved.
    std::string device;
    unsigned port = 0;
    // node_exporter's numbering: 0 unknown, 1 down, 2 init, 3 armed, 4 active.
    int port_state_id = 0;
    int sm_state = 0;  // SMInfo: 0 not active, 1 discovering, 2 standby, 3 master
    unsigned long events = 0, link_lost = 0, link_back = 0, sweeps = 0, marks = 0, coalesced = 0,
                  ignored = 0, device_failures = 0, retries = 0, mad_path_dead = 0;
    // OpenSM's MAD path found dead since its device's last reset: OpenSM
    // must run again (portwatch asked it to exit, or only said so).
    bool mad_path_dead_now = false;
    // When the kernel ends opensm (SIGKILL) if the exit portwatch asked for
    // has not completed: wall clock, seconds; empty while none is armed.
    std::optional<double> exit_kill_unix;
    std::array<ReactionHistogram, kStages> reaction{};
    std::optional<double> last_link_back_unix;    // wall clock, seconds
    std::optional<double> last_recovery_seconds;  // link back -> port ACTIVE

    bool operator==(const MetricsSnapshot &other) const;
    bool operator!=(const MetricsSnapshot &other) const { return !(*this == other); }
};

// The exposition text: HELP and TYPE lines, label values escaped.
std::string render_metrics(const MetricsSnapshot &snapshot);

}  // namespace portwatch
