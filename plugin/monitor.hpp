// The event thread and the pipeline it drives:
//   verbs async fd -> re-query the port (PortTracker) -> Policy -> Host.
// The thread sleeps in poll() on every open device's async_fd plus a wake-up
// eventfd, with a timeout only while a hold-off or a device reopen is due:
// zero wake-ups when idle, and stop() returns as soon as the thread sees the
// eventfd.
#pragma once

#include <poll.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/thread/thread.hpp>

#include "clock.hpp"
#include "devices.hpp"
#include "host.hpp"
#include "options.hpp"
#include "policy.hpp"
#include "port_tracker.hpp"
#include "telemetry.hpp"
#include "wakeup.hpp"

namespace portwatch {

struct Counters {
    unsigned long events = 0;       // async events read
    unsigned long transitions = 0;  // link lost / link back seen on a watched port
    unsigned long sweeps = 0;       // heavy sweeps requested with a wake-up
    unsigned long marks = 0;        // next sweep forced heavy, no wake-up
    unsigned long coalesced = 0;    // wake-ups deferred by the hold-off
    unsigned long ignored = 0;      // transitions not acted on (SM state)
    unsigned long device_failures = 0;
};

class Monitor {
public:
    // Opens the devices and resolves the port; throws std::runtime_error
    // (with a message for the log) on a configuration error.
    Monitor(const pw_host &host, const Options &opts);
    ~Monitor();  // stop()
    Monitor(const Monitor &) = delete;
    Monitor &operator=(const Monitor &) = delete;

    void start();
    // Wakes and joins the thread, then logs the summary. Idempotent.
    void stop();
    // From OpenSM's threads: cheap, never blocks on the event thread.
    void report(pw_report report);

    // Valid once stop() returned (the thread owns them before).
    const Counters &counters() const { return counters_; }

private:
    void run();
    void serve(TimePoint now, const std::vector<pollfd> &fds, std::vector<std::string> names);
    void drain_device(const std::string &name, TimePoint now);
    void handle_event(const std::string &name, const AsyncEvent &event, TimePoint now);
    void examine_port(VerbsDevice &dev, unsigned port, const char *cause, TimePoint now);
    void sync_ports(const std::string &name, TimePoint now);
    void note_port_guid(VerbsDevice &dev, unsigned port);
    void rescan(TimePoint now);
    void act(const PortKey &key, const Transition &t, const char *cause, TimePoint now);
    void apply(const Decision &d, TimePoint event_time);
    int poll_timeout(TimePoint now) const;

    Host host_;
    Options opts_;
    Devices devices_;
    Policy policy_;
    Telemetry telemetry_;
    Wakeup wakeup_;
    std::map<PortKey, PortTracker> trackers_;  // survive a device's reopening
    std::map<PortKey, uint64_t> port_guids_;   // last port GUID seen, to log a change
    TimePoint deferred_event_time_;
    Counters counters_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> unresolved_{false};
    std::atomic<bool> resolve_requested_{false};
    boost::thread thread_;
    bool stopped_ = false;
};

} // namespace portwatch
