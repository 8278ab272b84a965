// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "monitor.hpp"

#include <endian.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <stdexcept>

#include "errno_text.hpp"

namespace portwatch {

namespace {
// A fault on the event thread that repeats is logged at ERROR again only
// after this long; in between at debug level.
constexpr Millis kTroubleRelog{60000};
// Lines a log window writes in full before it only counts: a single bounce
// (link lost, back, three telemetry lines, INIT -> ARMED -> ACTIVE, ACTIVE
// again) fits, a storm does not.
constexpr unsigned kLogBurst = 8;
// The metrics file is rewritten at most once per hold-off, and never more
// than ten times a second.
constexpr Millis kMetricsShortest{100};
// In a long storm, a summary goes to syslog at most this often.
constexpr Millis kSysSummaryEvery{60000};

double unix_now()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

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

Monitor::Monitor(const pw_host &host, const Options &opts, std::string osm_version)
    : host_(host), opts_(opts), devices_(host_, opts_), resolver_(host_, opts_), policy_(opts_),
      outcome_(opts_), limiter_(opts_.holdoff, kLogBurst), osm_version_(std::move(osm_version)),
      metrics_backoff_(std::max(opts_.holdoff, kMetricsShortest),
                       std::max(opts_.retry_max, std::max(opts_.holdoff, kMetricsShortest))),
      trouble_backoff_(std::min(opts_.retry_min, opts_.retry_max), opts_.retry_max)
{
    // Before the devices: a bad metrics directory is a configuration error
    // the admin hears about first.
    if (!opts_.metrics_file.empty())
        metrics_ = std::make_unique<MetricsFile>(
            metrics_path(opts_.metrics_file, be64toh(host_.sm_port_guid_net())));
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
    thread_ = boost::thread([this] { run(); });
}

void Monitor::stop()
{
    if (stopped_)
        return;
    stopped_ = true;
    stopping_ = true;
    wakeup_.signal();
    if (thread_.joinable())
        thread_.join();
    summarise_if_due(Clock::now(), true);  // what the last window counted is not lost
    if (metrics_)
        metrics_->remove();  // a stopped plugin has no state to show
    host_.log(PW_LOG_INFO,
              "stopped: events=%lu transitions=%lu sweeps=%lu marks=%lu coalesced=%lu "
              "ignored=%lu device_failures=%lu retries=%lu",
              counters_.events, counters_.transitions, counters_.sweeps, counters_.marks,
              counters_.coalesced, counters_.ignored, counters_.device_failures, counters_.retries);
}

void Monitor::report(pw_report report) noexcept
{
    try {
        bool logged = true;
        bool wake = false;
        if (std::optional<double> ms = telemetry_.on_report(report, Clock::now(), &logged)) {
            const char *name = report == PW_REPORT_HEAVY_SWEEP_START  ? "HEAVY_SWEEP_START"
                               : report == PW_REPORT_HEAVY_SWEEP_DONE ? "HEAVY_SWEEP_DONE"
                                                                      : "SUBNET_UP";
            // In a storm only the histogram has them (the sweep was
            // requested by a line the log window counted).
            host_.log(logged ? PW_LOG_INFO : PW_LOG_DEBUG,
                      "telemetry: %s %.3f ms after the port event", name, *ms);
            wake = metrics_ != nullptr;  // a new observation for the file
        }
        switch (report) {
        case PW_REPORT_HEAVY_SWEEP_START:
        case PW_REPORT_HEAVY_SWEEP_DONE:
            ++progress_reports_;
            wake = awaiting_sweep_;
            break;
        case PW_REPORT_SUBNET_UP:
            ++up_reports_;
            wake = awaiting_sweep_;
            break;
        case PW_REPORT_STATE_CHANGE:
            // The SM may have started acting: a return it ignored before
            // may need a sweep now.
            state_changed_ = true;
            wake = true;
            break;
        case PW_REPORT_OTHER:
            break;
        }
        // OpenSM may have (re)chosen its port: let the thread look again.
        if (unresolved_ && (report == PW_REPORT_SUBNET_UP || report == PW_REPORT_STATE_CHANGE)) {
            resolve_requested_ = true;
            wake = true;
        }
        if (wake)
            wakeup_.signal();
    } catch (...) {  // NOLINT(bugprone-empty-catch): swallowed on purpose
        // Called from OpenSM's own threads: nothing may escape into C.
    }
}

int Monitor::poll_timeout(TimePoint now) const
{
    std::optional<TimePoint> due;
    std::optional<TimePoint> metrics_due;
    if (metrics_pending_)
        metrics_due = metrics_next_;
    for (std::optional<TimePoint> t : {policy_.deadline(), devices_.retry_at(), outcome_.deadline(),
                                       limiter_.deadline(), metrics_due})
        if (t && (!due || *t < *due))
            due = t;
    if (!due)
        return -1;  // idle: sleep until an fd wakes us
    if (*due <= now)
        return 0;
    // Round up so we never wake a hair early and spin.
    auto ms = std::chrono::ceil<Millis>(*due - now).count();
    constexpr long long kDay = 24LL * 3600 * 1000;
    return ms > kDay ? static_cast<int>(kDay) : static_cast<int>(ms);
}

void Monitor::run() noexcept
{
    // Named so admins can find it in top -H and tests can read its counters.
    pthread_setname_np(pthread_self(), "portwatch");
    while (!stopping_) {
        try {
            loop_once();
        } catch (const std::exception &e) {
            trouble(e.what(), Clock::now());
        } catch (...) {
            trouble("unknown exception", Clock::now());
        }
    }
}

void Monitor::trouble(const char *what, TimePoint now) noexcept
{
    try {
        Millis pause = trouble_backoff_.take();
        bool again = what == last_trouble_ && now - last_trouble_at_ < kTroubleRelog;
        host_.log(again ? PW_LOG_DEBUG : PW_LOG_SYS_ERROR,
                  "event thread: %s; carrying on in %lld ms", what,
                  static_cast<long long>(pause.count()));
        if (!again) {
            last_trouble_ = what;
            last_trouble_at_ = now;
        }
        // Wait without spinning, but let stop() end the wait at once.
        pollfd fd{wakeup_.fd(), POLLIN, 0};
        poll(&fd, 1, static_cast<int>(pause.count()));
    } catch (...) {
        pollfd fd{wakeup_.fd(), POLLIN, 0};
        poll(&fd, 1, 1000);
    }
}

void Monitor::loop_once()
{
    std::vector<pollfd> fds;
    std::vector<std::string> names;
    fds.push_back({wakeup_.fd(), POLLIN, 0});
    // The watched port's device first: when several devices have events
    // waiting, OpenSM's own port is never served behind the others.
    std::vector<VerbsDevice *> devices = devices_.open_devices();
    if (const std::optional<PortKey> &watched = resolver_.watched())
        std::stable_partition(devices.begin(), devices.end(),
                              [&](VerbsDevice *dev) { return dev->name() == watched->device; });
    for (VerbsDevice *dev : devices) {
        fds.push_back({dev->async_fd(), POLLIN, 0});
        names.push_back(dev->name());
    }
    int rc = poll(fds.data(), fds.size(), poll_timeout(Clock::now()));
    if (rc < 0) {
        if (errno == EINTR)
            return;
        // Not an exception: this is expected trouble (EINVAL past
        // RLIMIT_NOFILE, ENOMEM), handled like any other on this thread.
        const std::string what = std::string("poll failed: ") + errno_text(errno);
        trouble(what.c_str(), Clock::now());
        return;
    }
    serve(Clock::now(), fds, names);
    summarise_if_due(Clock::now());
    update_metrics(Clock::now());
    trouble_backoff_.reset();
}

bool Monitor::note(TimePoint now, pw_log_level level, const char *fmt, ...)
{
    // A window that has just ended takes this line too: its summary is
    // written at the end of this wake-up (or at once, by a sweep the line
    // wakes), not a line before it.
    line_full_ = limiter_.admit(now);
    if (line_full_) {
        va_list args;
        va_start(args, fmt);
        host_.vlog(level, fmt, args);
        va_end(args);
    }
    return line_full_;
}

void Monitor::summarise_if_due(TimePoint now, bool now_anyway)
{
    std::optional<TimePoint> due = limiter_.deadline();
    if (!due || (*due > now && !now_anyway) || (now_anyway && limiter_.counted() == 0))
        return;
    const std::optional<PortKey> &watched = resolver_.watched();
    const std::string port_name = watched ? watched->str() : "the watched port";
    const char *port = port_name.c_str();
    std::optional<LinkState> last = watched_state();
    const char *state = last ? link_state_name(*last) : "unknown";
    if (limiter_.counted() == 0) {
        // A window of the chain passed with nothing to count: the storm is
        // over. Syslog hears of its end and the port's final state.
        limiter_.next_window(now);
        host_.log(storm_.lost + storm_.back ? PW_LOG_SYS_INFO : PW_LOG_INFO,
                  "storm over after %lld ms: %u link lost, %u link back and sweeps requested %u "
                  "in its summaries; %s is %s",
                  static_cast<long long>(std::chrono::ceil<Millis>(now - storm_started_).count()),
                  storm_.lost, storm_.back, storm_.sweeps, port, state);
        storm_ = Tally{};
        storm_summaries_ = 0;
        return;
    }
    TimePoint window_start = *due - limiter_.window();
    if (storm_summaries_++ == 0) {
        storm_started_ = window_start;
        last_sys_summary_.reset();
    }
    // A link that came and went is news for syslog: the first summary of a
    // storm, then at most one a minute (its end is told anyway).
    bool sys = tally_.lost + tally_.back > 0 &&
               (!last_sys_summary_ || now - *last_sys_summary_ >= kSysSummaryEvery);
    if (sys)
        last_sys_summary_ = now;
    host_.log(sys ? PW_LOG_SYS_INFO : PW_LOG_INFO,
              "in the last %lld ms: %u link lost, %u link back, %u other lines; "
              "sweeps requested %u, marks %u, deferred %u; %s is %s [last action=%s]",
              static_cast<long long>(std::chrono::ceil<Millis>(now - window_start).count()),
              tally_.lost, tally_.back, tally_.other, tally_.sweeps, tally_.marks, tally_.deferred,
              port, state, action_name(tally_.last));
    storm_.lost += tally_.lost;
    storm_.back += tally_.back;
    storm_.sweeps += tally_.sweeps;
    tally_ = Tally{};
    limiter_.next_window(now);
}

std::optional<LinkState> Monitor::watched_state() const
{
    const std::optional<PortKey> &watched = resolver_.watched();
    if (!watched || !devices_.find(watched->device))
        return std::nullopt;  // unknown while its device is closed
    auto it = trackers_.find(tracker_key(*watched));
    if (it == trackers_.end())
        return std::nullopt;
    const auto &last = it->second.last();
    if (!last)
        return std::nullopt;
    return last->state;
}

MetricsSnapshot Monitor::metrics_snapshot() const
{
    MetricsSnapshot s;
    s.version = PACKAGE_VERSION;
    s.osm_version = osm_version_;
    // The instance: OpenSM's port, known from the start with stock opensm
    // (it binds before it loads plugins); else the port watched.
    s.port_guid = be64toh(host_.sm_port_guid_net());
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
    s.reaction = telemetry_.histograms();
    s.last_link_back_unix = last_link_back_unix_;
    s.last_recovery_seconds = last_recovery_seconds_;
    return s;
}

void Monitor::update_metrics(TimePoint now, bool first)
{
    if (!metrics_)
        return;
    MetricsSnapshot snapshot = metrics_snapshot();
    metrics_pending_ = first || snapshot != metrics_written_;
    if (!metrics_pending_ || (!first && now < metrics_next_))
        return;  // unchanged, or due at metrics_next_ (poll_timeout wakes us)
    int err = metrics_->write(render_metrics(snapshot));
    if (err && first)
        throw std::runtime_error("portwatch.metrics_file: cannot write " + metrics_->path() + ": " +
                                 errno_text(err));
    if (err) {
        Millis pause = metrics_backoff_.take();
        metrics_next_ = now + pause;
        host_.log(err == metrics_error_ ? PW_LOG_DEBUG : PW_LOG_ERROR,
                  "cannot write metrics file %s: %s; trying again in %lld ms",
                  metrics_->path().c_str(), errno_text(err).c_str(),
                  static_cast<long long>(pause.count()));
        metrics_error_ = err;
        return;
    }
    if (metrics_error_)
        host_.log(PW_LOG_INFO, "metrics file %s written again", metrics_->path().c_str());
    metrics_error_ = 0;
    metrics_backoff_.reset();
    metrics_written_ = std::move(snapshot);
    metrics_pending_ = false;
    metrics_next_ = now + std::max(opts_.holdoff, kMetricsShortest);
}

void Monitor::serve(TimePoint now, const std::vector<pollfd> &fds,
                    const std::vector<std::string> &names)
{
    if (fds[0].revents) {
        wakeup_.drain();
        if (stopping_)
            return;
        if (resolve_requested_.exchange(false))
            resolve(now);
        take_reports(now);
    }
    for (size_t i = 1; i < fds.size(); ++i) {
        const std::string &name = names[i - 1];
        if (fds[i].revents & POLLIN)
            drain_device(name, now);
        // Disassociated device: recent kernels report POLLERR, reads fail with EIO.
        if ((fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) && devices_.find(name))
            lose(name, fds[i].revents & POLLNVAL ? "POLLNVAL" : "POLLERR", now);
    }
    if (std::optional<TimePoint> due = policy_.deadline(); due && *due <= now) {
        Decision d = policy_.on_deadline(host_.sm_state(), now);
        note(now, PW_LOG_INFO, "hold-off over: %s [action=%s]", d.reason, action_name(d.action));
        apply(d, deferred_event_time_, now);
    }
    if (devices_.retry_due(now))
        rescan(now);
    if (std::optional<TimePoint> due = outcome_.deadline(); due && *due <= now)
        check_outcome(now);
    awaiting_sweep_ = outcome_.awaiting_sweep();
    if (awaiting_sweep_) {
        // Reports counted before the flag went up woke nobody (report()
        // counts, then reads the flag): take them now, or a sweep that
        // already ended would be waited for until the bound.
        take_reports(now);
        awaiting_sweep_ = outcome_.awaiting_sweep();
    }
    if (!awaiting_sweep_) {
        // Reports nobody waits for are absorbed: a later check must not
        // take an old SUBNET_UP for the end of its sweep. Not while an SM
        // state change is still to be taken: the sweep of an SM that just
        // started to act is reported after its state change, and belongs
        // to the check that change starts. (Counts read first: a report
        // counted before the read follows any state change it belongs to.)
        unsigned progress = progress_reports_, up = up_reports_;
        if (!state_changed_) {
            progress_seen_ = progress;
            up_seen_ = up;
        }
    }
}

void Monitor::take_reports(TimePoint now)
{
    // The state first: the sweep of an SM that just became master may have
    // been reported already, and belongs to this check.
    if (state_changed_.exchange(false)) {
        bool acting = opts_.act_in.contains(host_.sm_state());
        if (acting && !sm_acting_ && resolver_.watched()) {
            outcome_.link_changed();      // tries of its own: the SM's sweep is new
            outcome_.recheck(now, true);  // an SM that starts acting sweeps
        }
        sm_acting_ = acting;
    }
    unsigned progress = progress_reports_, up = up_reports_;
    if (progress != progress_seen_)
        outcome_.sweep_progress(now);
    if (up != up_seen_)
        outcome_.subnet_up(now);
    progress_seen_ = progress;
    up_seen_ = up;
}

void Monitor::resolve(TimePoint now)
{
    std::optional<PortKey> before = resolver_.watched();
    if (resolver_.resolve(devices_)) {
        const std::optional<PortKey> &after = resolver_.watched();
        if (after && after != before)
            sync_ports(after->device, now);
    }
    looking(now);
}

void Monitor::looking(TimePoint now)
{
    bool looking = resolver_.looking();
    unresolved_ = looking;
    // New devices are found only by listing them again.
    devices_.keep_looking(looking, now);
}

void Monitor::rescan(TimePoint now)
{
    std::optional<PortKey> before = resolver_.watched();
    std::vector<std::string> opened = devices_.scan(now);
    // Learn the new devices' port GUIDs first: the watched port is found by
    // its GUID, and a device back under another name by its GUIDs.
    for (const std::string &name : opened)
        if (VerbsDevice *dev = devices_.find(name))
            for (unsigned port = 1; port <= dev->port_count(); ++port)
                note_port_guid(*dev, port);
    resolver_.resolve(devices_);
    for (const std::string &name : opened)
        sync_ports(name, now);
    // The port may now resolve to a device that was already open.
    const std::optional<PortKey> &after = resolver_.watched();
    if (after && after != before && devices_.find(after->device) &&
        std::find(opened.begin(), opened.end(), after->device) == opened.end())
        sync_ports(after->device, now);
    looking(now);
}

void Monitor::lose(const std::string &name, const char *why, TimePoint now)
{
    ++counters_.device_failures;
    devices_.lose(name, why, now);
    // The watched port may be gone with it: say so, and keep looking.
    resolver_.resolve(devices_);
    looking(now);
}

void Monitor::drain_device(const std::string &name, TimePoint now)
{
    // Bounded: a device flooding events cannot starve the others or stop().
    for (int i = 0; i < 64 && !stopping_; ++i) {
        VerbsDevice *dev = devices_.find(name);
        if (!dev)
            return;
        AsyncEvent event;
        int err = 0;
        switch (dev->read_event(&event, &err)) {
        case VerbsDevice::Read::Empty:
            return;
        case VerbsDevice::Read::Failed:
            lose(name, errno_text(err).c_str(), now);
            return;
        case VerbsDevice::Read::Event:
            ++counters_.events;
            handle_event(name, event, now);
            break;
        }
    }
}

void Monitor::handle_event(const std::string &name, const AsyncEvent &event, TimePoint now)
{
    const char *type = ibv_event_type_str(event.type);
    if (event.type == IBV_EVENT_DEVICE_FATAL) {
        lose(name, type, now);
        return;
    }
    VerbsDevice *dev = devices_.find(name);
    if (!dev || event.port == 0 || event.port > dev->port_count()) {
        host_.log(PW_LOG_DEBUG, "%s event %s: not a port event, ignored", name.c_str(), type);
        return;
    }
    // A GID change may move the port GUID we matched on; while the watched
    // port is not found (OpenSM's GUID on no open port, or a failed GID
    // query), every event is a chance to find it.
    if (event.type == IBV_EVENT_GID_CHANGE)
        note_port_guid(*dev, event.port);
    if (event.type == IBV_EVENT_GID_CHANGE || resolver_.looking())
        resolve(now);
    dev = devices_.find(name);
    if (dev)
        examine_port(*dev, event.port, type,
                     event.type == IBV_EVENT_PORT_ERR || event.type == IBV_EVENT_PORT_ACTIVE, now);
}

std::string Monitor::tracker_key(const PortKey &key) const
{
    auto it = port_guids_.find(key);
    if (it == port_guids_.end())
        return "port " + key.str();
    char buf[32];
    (void)std::snprintf(buf, sizeof(buf), "guid 0x%016llx",
                        static_cast<unsigned long long>(it->second));
    return buf;
}

void Monitor::examine_port(VerbsDevice &dev, unsigned port, const char *cause,
                           bool link_may_have_changed, TimePoint now)
{
    PortKey key{dev.name(), port};
    // Once the watched port is known no other port matters, not even a query:
    // events on a host's other ports cost next to nothing.
    const std::optional<PortKey> &watched = resolver_.watched();
    if ((watched && key != *watched) || !resolver_.is_watched(key, true)) {
        host_.log(PW_LOG_DEBUG, "%s %s: not the watched port, ignored", key.str().c_str(), cause);
        return;
    }
    PortInfo info;
    if (int err = dev.query_port(port, &info)) {
        std::string why = std::string("query_port: ") + errno_text(err);
        lose(key.device, why.c_str(), now);
        return;
    }
    if (!resolver_.is_watched(key, info.infiniband)) {
        host_.log(PW_LOG_DEBUG, "%s %s: not the watched port, ignored", key.str().c_str(), cause);
        return;
    }
    if (!port_guids_.count(key))
        note_port_guid(dev, port);  // the tracker is keyed by it
    Transition t = trackers_[tracker_key(key)].update(info.snapshot);
    act(key, t, cause, link_may_have_changed, now);
}

void Monitor::sync_ports(const std::string &name, TimePoint now)
{
    VerbsDevice *dev = devices_.find(name);
    for (unsigned port = 1; dev && port <= dev->port_count(); ++port) {
        examine_port(*dev, port, "device opened", true, now);
        dev = devices_.find(name);  // examine_port may have lost it
    }
}

void Monitor::note_port_guid(VerbsDevice &dev, unsigned port)
{
    // A device that comes back under the same name may be another HCA, or
    // the same one with a new GUID. Say so once: it explains why the watched
    // port may no longer resolve.
    PortKey key{dev.name(), port};
    uint64_t guid = 0;
    if (dev.port_guid(port, &guid) != 0)
        return;  // unknown: keep what we have
    devices_.remember_guid(key.device, port, guid);
    auto [it, inserted] = port_guids_.emplace(key, guid);
    if (inserted || it->second == guid)
        return;
    host_.log(PW_LOG_INFO, "%s came back with port GUID 0x%016llx (was 0x%016llx)",
              key.str().c_str(), static_cast<unsigned long long>(guid),
              static_cast<unsigned long long>(it->second));
    it->second = guid;
}

void Monitor::act(const PortKey &key, const Transition &t, const char *cause,
                  bool link_may_have_changed, TimePoint now)
{
    const std::optional<PortKey> &watched = resolver_.watched();
    bool watched_port = watched && key == *watched;
    if (t.change == Change::Initial) {
        host_.log(PW_LOG_INFO, "%s is %s (phys state %u, LID %u)", key.str().c_str(),
                  link_state_name(t.to.state), t.to.phys_state, t.to.lid);
        // Up but not configured: the SM should see to it (at start-up its
        // first sweep is on its way); check that it does.
        if (watched_port && t.to.state == LinkState::Init)
            outcome_.recheck(now, true);
        return;
    }
    pw_sm_state sm = host_.sm_state();
    Decision d = policy_.on_change(t.change, sm, now);
    bool link_change = t.change == Change::LinkLost || t.change == Change::LinkBack;
    if (link_change) {
        ++counters_.transitions;
        ++(t.change == Change::LinkLost ? counters_.link_lost : counters_.link_back);
        if (d.action == Action::None)
            ++counters_.ignored;
        if (watched_port) {
            outcome_.link_changed();
            if (t.change == Change::LinkLost) {
                outcome_.settled();
                link_back_at_.reset();
            } else {
                link_back_at_ = now;
                last_link_back_unix_ = unix_now();
            }
        }
    }
    // Repeats (rxe's second PORT_ACTIVE, mlx5's PORT_ERR read back twice)
    // stay visible at VERBOSE: an admin checking "no second sweep" sees why.
    // The SM's link lost or back and acted on goes to syslog as well.
    pw_log_level level = link_change && watched_port && d.action != Action::None ? PW_LOG_SYS_INFO
                         : link_change || t.change == Change::Progress           ? PW_LOG_INFO
                                                                                 : PW_LOG_VERBOSE;
    if (!note(now, level, "%s %s -> %s (%s): %s, %s%s%s [action=%s]", key.str().c_str(),
              link_state_name(t.from->state), link_state_name(t.to.state), cause,
              change_name(t.change), d.reason,
              d.action == Action::None && link_change ? "; SM is " : "",
              d.action == Action::None && link_change ? sm_state_name(sm) : "",
              action_name(d.action))) {
        if (t.change == Change::LinkLost)
            ++tally_.lost;
        else if (t.change == Change::LinkBack)
            ++tally_.back;
        else
            ++tally_.other;
    }
    apply(d, now, now);
    if (!watched_port)
        return;
    if (t.to.state == LinkState::Active || t.to.state == LinkState::Armed) {
        outcome_.settled();
        // A sweep the hold-off deferred still runs at the window's end even
        // though the port reads ACTIVE now: on rxe (and any driver that has
        // no INIT state) ACTIVE from verbs says nothing about whether the SM
        // configured the port, and the return it was for is real.
        if (t.to.state == LinkState::Active)
            note_active(key, now);
    } else if (t.to.state == LinkState::Init && !link_change) {
        // Still INIT (events read late can hide a return: INIT, DOWN, INIT
        // read as INIT, INIT). A link event, or a device reopened (its link
        // may have gone and come back while it was closed), is a new return
        // with tries of its own - also while a deferred sweep is pending,
        // or the tries of the old return would run out on the new one. A
        // sweep that fails to configure the port changes no link state and
        // reopens nothing, so this cannot feed itself. With nothing on its
        // way, check the outcome.
        if (link_may_have_changed)
            outcome_.link_changed();
        if (!policy_.deadline())
            outcome_.recheck(now, false);
    }
}

void Monitor::note_active(const PortKey &key, TimePoint now)
{
    if (!link_back_at_)
        return;
    double ms = ms_between(*link_back_at_, now);
    last_recovery_seconds_ = ms / 1000.0;
    // The outcome an on-call admin waits for: to syslog as well.
    if (!note(now, PW_LOG_SYS_INFO, "%s is ACTIVE again %.3f ms after the link came back",
              key.str().c_str(), ms))
        ++tally_.other;
    link_back_at_.reset();
}

void Monitor::check_outcome(TimePoint now)
{
    const std::optional<PortKey> watched = resolver_.watched();
    if (!watched) {
        outcome_.settled();
        return;
    }
    const PortKey &key = *watched;
    VerbsDevice *dev = devices_.find(key.device);
    if (!dev) {
        // Gone with its device: the reopen compares its state with the last
        // one seen, which is the check.
        outcome_.settled();
        return;
    }
    PortInfo info;
    if (int err = dev->query_port(key.port, &info)) {
        outcome_.settled();
        std::string why = std::string("query_port: ") + errno_text(err);
        lose(key.device, why.c_str(), now);
        return;
    }
    // Keep the tracker in step: what the check saw is the port's last state.
    trackers_[tracker_key(key)].update(info.snapshot);
    LinkState state = info.snapshot.state;
    switch (outcome_.on_deadline(state, now)) {
    case Outcome::Verdict::Wait:
        return;
    case Outcome::Verdict::Fine:
        if (state == LinkState::Active)
            note_active(key, now);
        return;
    case Outcome::Verdict::Off:
        host_.log(PW_LOG_VERBOSE, "%s is INIT after the heavy sweep (portwatch.verify_tries=0)",
                  key.str().c_str());
        return;
    case Outcome::Verdict::GiveUp:
        host_.log(PW_LOG_SYS_ERROR,
                  "%s is still INIT after %u more heavy sweeps: the SM could not bring its port up",
                  key.str().c_str(), outcome_.tries());
        return;
    case Outcome::Verdict::Retry:
        break;
    }
    pw_sm_state sm = host_.sm_state();
    Decision d = policy_.on_retry(sm, now);
    if (!note(now, PW_LOG_INFO,
              "%s is INIT %lld ms after the heavy sweep: %s (try %u of %u)%s%s [action=%s]",
              key.str().c_str(), static_cast<long long>(outcome_.waited().count()), d.reason,
              outcome_.tries(), opts_.verify_tries, d.action == Action::None ? "; SM is " : "",
              d.action == Action::None ? sm_state_name(sm) : "", action_name(d.action)))
        ++tally_.other;
    if (d.action == Action::Sweep || d.action == Action::Defer)
        ++counters_.retries;
    apply(d, now, now);
}

void Monitor::apply(const Decision &d, TimePoint event_time, TimePoint now)
{
    if (!line_full_ && d.action != Action::None) {
        // Asked for by a line the log window counted: the summary says so,
        // and a woken sweep closes the window at once, so that the sweep is
        // in the log when it happens, not a window later.
        tally_.last = d.action;
        ++(d.action == Action::Sweep  ? tally_.sweeps
           : d.action == Action::Mark ? tally_.marks
                                      : tally_.deferred);
        if (d.action == Action::Sweep)
            summarise_if_due(now, true);
    }
    switch (d.action) {
    case Action::Sweep:
        // Stamp first: the sweeper may report HEAVY_SWEEP_START before the
        // wake-up call below has even returned.
        telemetry_.sweep_requested(event_time, line_full_);
        progress_seen_ = progress_reports_;
        up_seen_ = up_reports_;
        outcome_.sweep_requested(now);
        awaiting_sweep_ = true;
        if (!host_.force_heavy_sweep(true)) {
            host_.log(PW_LOG_INFO, "OpenSM is exiting: sweep not requested");
            outcome_.settled();
            return;
        }
        ++counters_.sweeps;
        break;
    case Action::Mark:
        if (host_.force_heavy_sweep(false))
            ++counters_.marks;
        break;
    case Action::Defer:
        ++counters_.coalesced;
        deferred_event_time_ = event_time;
        break;
    case Action::None:
        break;
    }
}

}  // namespace portwatch
