// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "metrics.hpp"

#include <cstdio>
#include <tuple>
#include <utility>

namespace portwatch {

namespace {

// Label values may hold '\', '"' or a newline only escaped.
std::string escaped(const std::string &value)
{
    std::string out;
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string number(double value)
{
    char buf[40];
    (void)std::snprintf(buf, sizeof(buf), "%.9g", value);
    return buf;
}

// Every sample carries the instance's label first: where one opensm runs
// per port, their files share a collector directory, and node_exporter
// refuses two samples with the same name and labels.
class Text {
public:
    explicit Text(std::string instance) : instance_(std::move(instance)) {}
    void family(const char *name, const char *type, const char *help)
    {
        out_ += std::string("# HELP ") + name + " " + help + "\n";
        out_ += std::string("# TYPE ") + name + " " + type + "\n";
    }
    void sample(const std::string &name, const std::string &labels, const std::string &value)
    {
        out_ += name + "{" + instance_;
        if (!labels.empty())
            out_ += "," + labels;
        out_ += "} " + value + "\n";
    }
    std::string take() { return std::move(out_); }

private:
    std::string instance_;
    std::string out_;
};

}  // namespace

void ReactionHistogram::observe(double seconds)
{
    for (size_t i = 0; i < kBounds.size(); ++i)
        if (seconds <= kBounds[i]) {
            ++buckets[i];
            break;
        }
    ++count;  // above the last bound: counted in +Inf only
    sum += seconds;
}

bool ReactionHistogram::operator==(const ReactionHistogram &other) const
{
    return buckets == other.buckets && count == other.count && sum == other.sum;
}

const char *stage_label(Stage stage)
{
    switch (stage) {
    case Stage::HeavySweepStart:
        return "heavy_sweep_start";
    case Stage::HeavySweepDone:
        return "heavy_sweep_done";
    case Stage::SubnetUp:
        return "subnet_up";
    }
    return "unknown";
}

bool MetricsSnapshot::operator==(const MetricsSnapshot &o) const
{
    auto fields = [](const MetricsSnapshot &s) {
        return std::tie(s.version, s.osm_version, s.device, s.port, s.port_guid, s.port_state_id,
                        s.sm_state, s.events, s.link_lost, s.link_back, s.sweeps, s.marks,
                        s.coalesced, s.ignored, s.device_failures, s.retries, s.mad_path_dead,
                        s.mad_path_dead_now, s.exit_kill_unix, s.reaction, s.last_link_back_unix,
                        s.last_recovery_seconds);
    };
    return fields(*this) == fields(o);
}

std::string render_metrics(const MetricsSnapshot &s)
{
    char guid[24];
    (void)std::snprintf(guid, sizeof(guid), "0x%016llx",
                        static_cast<unsigned long long>(s.port_guid));
    Text t(std::string("port_guid=\"") + (s.port_guid ? guid : "") + "\"");
    const std::string port = s.device.empty() ? "" : std::to_string(s.port);
    const std::string where = "device=\"" + escaped(s.device) + "\",port=\"" + port + "\"";

    t.family("portwatch_info", "gauge",
             "portwatch's version, OpenSM's, and the port it watches (empty while none).");
    t.sample("portwatch_info",
             "version=\"" + escaped(s.version) + "\",opensm_version=\"" + escaped(s.osm_version) +
                 "\"," + where,
             "1");
    t.family("portwatch_port_state_id", "gauge",
             "State of the SM's port: 0 unknown, 1 down, 2 init, 3 armed, 4 active.");
    t.sample("portwatch_port_state_id", where, std::to_string(s.port_state_id));
    t.family("portwatch_sm_state", "gauge",
             "OpenSM's SMInfo state: 0 not active, 1 discovering, 2 standby, 3 master.");
    t.sample("portwatch_sm_state", "", std::to_string(s.sm_state));

    struct Counter {
        const char *name;
        const char *help;
        unsigned long value;
    };
    const Counter counters[] = {
        {"portwatch_events_total", "Asynchronous verbs events read.", s.events},
        {"portwatch_sweeps_requested_total",
         "Heavy sweeps requested with a wake-up of the sweeper.", s.sweeps},
        {"portwatch_marks_total", "Next sweeps forced heavy without a wake-up (link lost).",
         s.marks},
        {"portwatch_coalesced_total", "Wake-ups deferred to the end of a hold-off window.",
         s.coalesced},
        {"portwatch_ignored_total", "Link changes not acted on (SM state not in act_in).",
         s.ignored},
        {"portwatch_device_failures_total", "Verbs devices lost (reset, fatal error, removal).",
         s.device_failures},
        {"portwatch_retries_total", "Heavy sweeps requested again because the port stayed INIT.",
         s.retries},
        {"portwatch_mad_path_dead_total",
         "Device resets after which OpenSM's MAD path was found dead (no SMP received).",
         s.mad_path_dead},
    };
    for (const Counter &c : counters) {
        t.family(c.name, "counter", c.help);
        t.sample(c.name, "", std::to_string(c.value));
    }
    t.family("portwatch_mad_path_dead", "gauge",
             "1: OpenSM's MAD path is dead since its device's reset; OpenSM must be restarted.");
    t.sample("portwatch_mad_path_dead", "", s.mad_path_dead_now ? "1" : "0");
    t.family("portwatch_exit_kill_timestamp_seconds", "gauge",
             "Unix time at which the kernel ends opensm (SIGKILL) should the exit portwatch asked "
             "for not complete; 0 while none is armed.");
    char kill_at[32] = "0";
    if (s.exit_kill_unix)
        (void)std::snprintf(kill_at, sizeof(kill_at), "%.3f", *s.exit_kill_unix);
    t.sample("portwatch_exit_kill_timestamp_seconds", "", kill_at);
    t.family("portwatch_transitions_total", "counter", "Link changes of the watched port.");
    t.sample("portwatch_transitions_total", "kind=\"link_lost\"", std::to_string(s.link_lost));
    t.sample("portwatch_transitions_total", "kind=\"link_back\"", std::to_string(s.link_back));

    t.family("portwatch_reaction_seconds", "histogram",
             "Seconds from a port event to a stage of the heavy sweep portwatch requested for it.");
    for (size_t i = 0; i < kStages; ++i) {
        const ReactionHistogram &h = s.reaction[i];
        const std::string stage =
            std::string("stage=\"") + stage_label(static_cast<Stage>(i)) + "\"";
        uint64_t cumulative = 0;
        for (size_t b = 0; b < ReactionHistogram::kBounds.size(); ++b) {
            cumulative += h.buckets[b];
            t.sample("portwatch_reaction_seconds_bucket",
                     stage + ",le=\"" + number(ReactionHistogram::kBounds[b]) + "\"",
                     std::to_string(cumulative));
        }
        t.sample("portwatch_reaction_seconds_bucket", stage + ",le=\"+Inf\"",
                 std::to_string(h.count));
        t.sample("portwatch_reaction_seconds_sum", stage, number(h.sum));
        t.sample("portwatch_reaction_seconds_count", stage, std::to_string(h.count));
    }
    if (s.last_link_back_unix) {
        t.family("portwatch_last_link_back_timestamp_seconds", "gauge",
                 "When the SM's link last came back (Unix time).");
        char stamp[40];  // %g would round a Unix time to the minute
        (void)std::snprintf(stamp, sizeof(stamp), "%.3f", *s.last_link_back_unix);
        t.sample("portwatch_last_link_back_timestamp_seconds", "", stamp);
    }
    if (s.last_recovery_seconds) {
        t.family("portwatch_last_recovery_seconds", "gauge",
                 "Seconds from the SM's link coming back to its port ACTIVE, the last time.");
        t.sample("portwatch_last_recovery_seconds", "", number(*s.last_recovery_seconds));
    }
    return t.take();
}

}  // namespace portwatch
