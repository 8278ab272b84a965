// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The event thread and the pipeline it drives:
//   verbs async fd -> re-query the port (PortTracker) -> Policy -> Host,
// with the device set (Devices) and the port resolution (PortResolver)
// beside it, and the outcome check (Outcome) after every sweep it causes.
// docs/DESIGN.md has the whole picture. The member functions are defined by
// concern, one file each:
//   monitor.cpp       construction, stop, what the metrics file shows
//   event_thread.cpp  the loop: wait in poll(), dispatch, shut down
//   port_events.cpp   a device's async events -> the port's transition
//   link_return.cpp   a transition -> what OpenSM is asked -> the outcome
//   osm_reports.cpp   what OpenSM's threads report, and taking it in
//   device_reset.cpp  after OpenSM's device came back: is its MAD path alive?
// The thread sleeps in poll() on every open device's async_fd plus a wake-up
// eventfd, with a timeout only while a hold-off, a device reopen or an
// outcome check is due: zero wake-ups when idle, and stop() returns as soon
// as the thread sees the eventfd. Nothing thrown on the thread leaves it: it
// logs one ERROR line and carries on after a backoff.
#pragma once

#include <poll.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clock.hpp"
#include "device_arrivals.hpp"
#include "devices.hpp"
#include "host.hpp"
#include "mad_file_watch.hpp"
#include "mad_path_check.hpp"
#include "metrics.hpp"
#include "metrics_publisher.hpp"
#include "options.hpp"
#include "outcome.hpp"
#include "policy.hpp"
#include "port_resolver.hpp"
#include "port_tracker.hpp"
#include "telemetry.hpp"
#include "transition_log.hpp"
#include "wakeup.hpp"

// The event thread is a Boost.Thread held through a pointer: only
// monitor.cpp includes Boost.Thread's header, which costs 1.2-1.7 s of
// compiling in each file that includes it (eight others include this one).
namespace boost {
class thread;
}

namespace portwatch {

struct Counters {
    unsigned long events = 0;                    // async events read
    unsigned long transitions = 0;               // link lost / link back seen on a watched port
    unsigned long link_lost = 0, link_back = 0;  // the same, by kind
    unsigned long sweeps = 0;                    // heavy sweeps requested with a wake-up
    unsigned long marks = 0;                     // next sweep forced heavy, no wake-up
    unsigned long coalesced = 0;                 // wake-ups deferred by the hold-off
    unsigned long ignored = 0;                   // transitions not acted on (SM state)
    unsigned long device_failures = 0;
    unsigned long retries = 0;        // sweeps requested again by the outcome check
    unsigned long mad_path_dead = 0;  // OpenSM's MAD path found dead after a device reset
};

class Monitor {
public:
    // Opens the devices, resolves the port and writes the metrics file (its
    // name already expanded); throws std::runtime_error (with a message for
    // the log) on a configuration error. osm_version is for the metrics.
    Monitor(const pw_host &host, const Options &opts, std::string osm_version = "");
    ~Monitor();  // stop()
    Monitor(const Monitor &) = delete;
    Monitor &operator=(const Monitor &) = delete;

    void start();
    // Wakes and joins the thread, then logs the summary. Idempotent.
    void stop();
    // From OpenSM's threads: cheap, never blocks on the event thread, never throws.
    void report(pw_report report) noexcept;

    // Valid once stop() returned (the thread owns them before).
    const Counters &counters() const { return counters_; }

private:
    // event_thread.cpp
    void run() noexcept;
    void loop_once();
    void trouble(const char *what, TimePoint now) noexcept;
    int poll_timeout(TimePoint now) const;
    // What poll() said of the descriptors after the devices' (0: not polled).
    struct Others {
        short arrivals = 0;
        short mad_file = 0;
    };
    void serve(TimePoint now, const std::vector<pollfd> &fds,
               const std::vector<VerbsDevice *> &devices, Others others);
    // The uevent socket open exactly while a device is missing.
    void watch_arrivals(TimePoint now);
    void run_due(TimePoint now);

    // osm_reports.cpp
    void take_reports(TimePoint now);
    void absorb_reports();

    // port_events.cpp. drain_device: false when it closed a device (the
    // caller's device pointers may be stale).
    bool drain_device(VerbsDevice &dev, TimePoint now);
    void handle_event(VerbsDevice &dev, const AsyncEvent &event, TimePoint now);
    // link_may_have_changed: the driver reported a link state event
    // (PORT_ERR/PORT_ACTIVE), or the device was (re)opened: the link may have
    // gone and come back without the states showing it.
    void examine_port(VerbsDevice &dev, unsigned port, const char *cause,
                      bool link_may_have_changed, TimePoint now);
    void sync_ports(const std::string &name, TimePoint now);
    void note_port_guid(VerbsDevice &dev, unsigned port);
    void resolve(TimePoint now);
    void rescan(TimePoint now);
    void looking(TimePoint now);
    void lose(const std::string &name, const char *why, TimePoint now);

    // device_reset.cpp. The baseline is taken before a reopened device's
    // ports are looked at (which may request the return's sweep).
    struct ResetBaseline {
        uint32_t received = 0;
        unsigned starts = 0;
    };
    ResetBaseline reset_baseline() const;
    void note_device_lost(const std::string &name);
    void note_device_back(TimePoint now, ResetBaseline baseline);
    void check_mad_path(TimePoint now);
    // evidence: what showed it, for the ERROR line.
    void mad_path_dead(const PortKey &key, TimePoint now, const std::string &evidence);
    // OpenSM's umad file reported by poll(): POLLERR (the kernel's word that
    // its device is gone: dead for good) or POLLNVAL (OpenSM closed it).
    void mad_file_event(short revents, TimePoint now);
    // Once OpenSM has bound its port: watch its umad file.
    void start_watching_mad_file();
    // Shortly after the file died: is the watched port's device back (or
    // never lost)? Then the verdict; else its return gives it.
    void look_after_mad_file_died(TimePoint now);
    void mad_file_verdict(const PortKey &key, TimePoint now);
    // Asks OpenSM to exit, the kernel's kill timer armed first.
    void request_exit(TimePoint now);
    // How long OpenSM's clean exit may take before the kernel ends it.
    static constexpr Millis kExitDeadline{5000};
    // From the umad file's POLLERR to the look at the watched device.
    static constexpr Millis kMadFileLook{100};

    // link_return.cpp
    void act(const PortKey &key, const Transition &t, const char *cause, bool link_may_have_changed,
             TimePoint now);
    void apply(const Decision &d, TimePoint event_time, TimePoint now);
    void hold_off_over(TimePoint now);
    void check_outcome(TimePoint now);
    void note_active(const PortKey &key, TimePoint now);

    // monitor.cpp
    // The log window's summary, naming the watched port and its state.
    void summarise(TimePoint now, bool now_anyway = false);
    // The tracker of the port at key on dev (by its GUID when known).
    PortTracker &tracker(const VerbsDevice &dev, const PortKey &key);
    PortId port_id(const VerbsDevice &dev, const PortKey &key) const;
    // The watched port's last state seen; empty while unknown or its device is closed.
    std::optional<LinkState> watched_state() const;
    MetricsSnapshot metrics_snapshot() const;
    void update_metrics(TimePoint now, bool first = false);

    Host host_;
    Options opts_;
    Devices devices_;
    PortResolver resolver_;
    Policy policy_;
    Outcome outcome_;
    MadPathCheck mad_check_;
    Telemetry telemetry_;
    TransitionLog log_;
    MetricsPublisher metrics_;
    Wakeup wakeup_;
    // A port keeps its last state across a reset and a rename (PortId).
    std::map<PortId, PortTracker> trackers_;
    std::map<PortKey, uint64_t> port_guids_;  // last port GUID seen, to log a change
    TimePoint deferred_event_time_;
    std::optional<TimePoint> link_back_at_;  // the watched link came back, not ACTIVE yet
    bool sm_acting_ = false;                 // the SM state last seen was in act_in
    Counters counters_;
    std::string osm_version_;
    std::optional<double> last_link_back_unix_;
    std::optional<double> last_recovery_seconds_;
    // The watched port's device was lost: its return starts the MAD path check.
    bool reset_pending_ = false;
    bool mad_path_dead_ = false;            // found dead since the last reset (the gauge)
    bool exit_requested_ = false;           // OpenSM was asked to exit for it
    std::optional<double> exit_kill_unix_;  // the kernel's kill timer: when it fires
    // OpenSM's umad file: watched once OpenSM has bound, until the kernel
    // says it died (done; also when it cannot be watched).
    MadFileWatch mad_file_;
    // The kernel's uevents, read while a device is missing.
    DeviceArrivals arrivals_;
    bool arrivals_failed_ = false;  // could not open: the backoff alone
    bool mad_file_done_ = false;
    std::optional<TimePoint> mad_file_died_at_;
    std::optional<TimePoint> mad_file_look_at_;
    // Trouble on the thread (an exception, a poll() error): the backoff and
    // the last line, so that a repeating fault is one ERROR line.
    Backoff trouble_backoff_;
    std::string last_trouble_;
    TimePoint last_trouble_at_{};
    // Shared with OpenSM's threads (report()).
    std::atomic<bool> stopping_{false};
    std::atomic<bool> unresolved_{false};
    std::atomic<bool> resolve_requested_{false};
    std::atomic<bool> state_changed_{false};
    std::atomic<bool> awaiting_sweep_{false};
    std::atomic<unsigned> progress_reports_{0};    // HEAVY_SWEEP_START/DONE seen
    std::atomic<unsigned> up_reports_{0};          // SUBNET_UP seen
    std::atomic<unsigned> sweep_starts_{0};        // HEAVY_SWEEP_START seen
    std::atomic<Clock::rep> last_sweep_start_{0};  // when the latest came (Clock ticks)
    unsigned progress_seen_ = 0, up_seen_ = 0;     // the thread's view of them
    std::unique_ptr<boost::thread> thread_;        // the event thread, from start()
    bool stopped_ = false;
};

}  // namespace portwatch
