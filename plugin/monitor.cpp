// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Monitor's wiring: construction and shutdown, and what it shows of
// itself (the log window's summaries, the metrics file).
#include "monitor.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/thread/thread.hpp>

namespace portwatch {

namespace {
int state_id(LinkState state)
{
    // node_exporter's infiniband collector numbers them so.
    switch (state) {
    case LinkState::Down:
        return 1;
    case LinkState::Init:
        return 2;
    case LinkState::Armed:
        return 3;
    case LinkState::Active:
        return 4;
    }
    return 0;
}
}  // namespace

// The metrics file's directory is opened before the devices (metrics_ comes
// before the scan): a bad directory is a configuration error the admin
// hears about first.
Monitor::Monitor(const pw_host &host, const Options &opts, std::string osm_version)
    : host_(host), opts_(opts), devices_(host_, opts_), resolver_(host_, opts_), policy_(opts_),
      outcome_(opts_), mad_check_(opts_.reset_check), log_(host_, opts_.holdoff),
      metrics_(host_, opts_), osm_version_(std::move(osm_version)),
      trouble_backoff_(std::min(opts_.retry_min, opts_.retry_max), opts_.retry_max)
{
    sm_acting_ = opts_.act_in.contains(host_.sm_state());
    rescan(Clock::now());
    std::string error = devices_.spec_error();
    if (!error.empty())
        throw std::runtime_error(error);
    update_metrics(Clock::now(), true);
}

Monitor::~Monitor()
{
    try {
        stop();
    } catch (...) {  // NOLINT(bugprone-empty-catch): swallowed on purpose
        // A destructor must not throw; stop() already tried all it could.
    }
}

void Monitor::start()
{
    thread_ = std::make_unique<boost::thread>([this] { run(); });
}

void Monitor::stop()
{
    if (stopped_)
        return;
    stopped_ = true;
    stopping_ = true;
    wakeup_.signal();
    if (thread_ && thread_->joinable())
        thread_->join();
    summarise(Clock::now(), true);  // what the last window counted is not lost
    // A stopped plugin has no state to show - unless it stopped OpenSM for a
    // dead MAD path: then the file keeps saying so (portwatch_mad_path_dead
    // 1) until OpenSM runs again, also when nothing starts it again.
    if (exit_requested_) {
        try {
            metrics_.offer(Clock::now(), metrics_snapshot(), true);
        } catch (const std::exception &e) {
            host_.log(PW_LOG_ERROR, "%s", e.what());
        }
    } else {
        metrics_.remove();
    }
    host_.log(PW_LOG_INFO,
              "stopped: events=%lu transitions=%lu sweeps=%lu marks=%lu coalesced=%lu "
              "ignored=%lu device_failures=%lu retries=%lu mad_path_dead=%lu",
              counters_.events, counters_.transitions, counters_.sweeps, counters_.marks,
              counters_.coalesced, counters_.ignored, counters_.device_failures, counters_.retries,
              counters_.mad_path_dead);
}

void Monitor::summarise(TimePoint now, bool now_anyway)
{
    if (!log_.deadline())
        return;  // nothing to tell: no need to name the port
    const std::optional<PortKey> &watched = resolver_.watched();
    std::optional<LinkState> last = watched_state();
    log_.summarise_if_due(now, watched ? watched->str() : "the watched port",
                          last ? link_state_name(*last) : "unknown", now_anyway);
}

PortTracker &Monitor::tracker(const VerbsDevice &dev, const PortKey &key)
{
    return trackers_[port_id(dev, key)];
}

PortId Monitor::port_id(const VerbsDevice &dev, const PortKey &key) const
{
    uint64_t guid = dev.known_guid(key.port);
    if (!guid) {
        // The device reopened and cannot tell its GUID now: the one it
        // had under this name keeps the port's history.
        if (auto it = port_guids_.find(key); it != port_guids_.end())
            guid = it->second;
    }
    return PortId::of(key, guid);
}

std::optional<LinkState> Monitor::watched_state() const
{
    const std::optional<PortKey> &watched = resolver_.watched();
    const VerbsDevice *dev = watched ? devices_.find(watched->device) : nullptr;
    if (!dev)
        return std::nullopt;  // unknown while its device is closed
    auto it = trackers_.find(port_id(*dev, *watched));
    if (it == trackers_.end() || !it->second.last())
        return std::nullopt;
    return it->second.last()->state;
}

MetricsSnapshot Monitor::metrics_snapshot() const
{
    MetricsSnapshot s;
    s.version = PACKAGE_VERSION;
    s.osm_version = osm_version_;
    // The instance: OpenSM's port, known from the start with stock opensm
    // (it binds before it loads plugins); else the port watched.
    s.port_guid = host_.sm_port_guid();
    if (const std::optional<PortKey> &watched = resolver_.watched()) {
        s.device = watched->device;
        s.port = watched->port;
        if (auto g = port_guids_.find(*watched); g != port_guids_.end() && s.port_guid == 0)
            s.port_guid = g->second;
        if (std::optional<LinkState> last = watched_state())
            s.port_state_id = state_id(*last);
    }
    s.sm_state = static_cast<int>(host_.sm_state());
    s.events = counters_.events;
    s.link_lost = counters_.link_lost;
    s.link_back = counters_.link_back;
    s.sweeps = counters_.sweeps;
    s.marks = counters_.marks;
    s.coalesced = counters_.coalesced;
    s.ignored = counters_.ignored;
    s.device_failures = counters_.device_failures;
    s.retries = counters_.retries;
    s.mad_path_dead = counters_.mad_path_dead;
    s.mad_path_dead_now = mad_path_dead_;
    s.exit_kill_unix = exit_kill_unix_;
    s.reaction = telemetry_.histograms();
    s.last_link_back_unix = last_link_back_unix_;
    s.last_recovery_seconds = last_recovery_seconds_;
    return s;
}

void Monitor::update_metrics(TimePoint now, bool first)
{
    if (metrics_.enabled())
        metrics_.offer(now, metrics_snapshot(), first);
}

}  // namespace portwatch
