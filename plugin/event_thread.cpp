// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The event thread: wait in poll(), dispatch what woke it, shut down.
//
// One wake-up reads, in this order: the wake-up eventfd (stop(), OpenSM's
// reports), every device's async events (the watched port's device first),
// then OpenSM's umad file (the kernel's POLLERR after a device reset), then
// whatever timer is due (the hold-off, a device reopen, the outcome check),
// and ends by writing the log window's summary and the metrics file
// when due. With nothing due the poll() has no timeout: an idle plugin never
// wakes.
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "errno_text.hpp"
#include "monitor.hpp"

namespace portwatch {

namespace {
// A fault on the event thread that repeats is logged at ERROR again only
// after this long; in between at debug level.
constexpr Millis kTroubleRelog{60000};
}  // namespace

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

void Monitor::loop_once()
{
    std::vector<pollfd> fds;
    fds.push_back({wakeup_.fd(), POLLIN, 0});
    // The watched port's device first: when several devices have events
    // waiting, OpenSM's own port is never served behind the others.
    std::vector<VerbsDevice *> devices = devices_.open_devices();
    if (const std::optional<PortKey> &watched = resolver_.watched())
        std::stable_partition(devices.begin(), devices.end(),
                              [&](VerbsDevice *dev) { return dev->name() == watched->device; });
    for (VerbsDevice *dev : devices)
        fds.push_back({dev->async_fd(), POLLIN, 0});
    // While a device is missing, the kernel's uevents: its arrival at once.
    watch_arrivals(Clock::now());
    const bool watch_arrivals = arrivals_.fd() >= 0;
    if (watch_arrivals)
        fds.push_back({arrivals_.fd(), POLLIN, 0});
    // Last, OpenSM's umad file, for the kernel's POLLERR alone (events 0):
    // known once OpenSM has bound its port, which it does before its first
    // sweep reports wake us.
    if (mad_file_.fd() < 0 && !mad_file_done_)
        start_watching_mad_file();
    const bool watch_mad_file = mad_file_.fd() >= 0;
    if (watch_mad_file)
        fds.push_back({mad_file_.fd(), 0, 0});
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
    Others others;
    size_t next = devices.size() + 1;
    if (watch_arrivals)
        others.arrivals = fds[next++].revents;
    if (watch_mad_file)
        others.mad_file = fds[next].revents;
    serve(Clock::now(), fds, devices, others);
    summarise(Clock::now());
    update_metrics(Clock::now());
    trouble_backoff_.reset();
}

int Monitor::poll_timeout(TimePoint now) const
{
    std::optional<TimePoint> due;
    for (std::optional<TimePoint> t :
         {policy_.deadline(), devices_.retry_at(), outcome_.deadline(), mad_check_.deadline(),
          mad_file_look_at_, log_.deadline(), metrics_.deadline()})
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

void Monitor::watch_arrivals(TimePoint now)
{
    const bool missing = devices_.retry_at().has_value();
    if (!missing) {
        arrivals_.close();
        arrivals_failed_ = false;
        return;
    }
    if (arrivals_.fd() >= 0 || arrivals_failed_)
        return;
    if (arrivals_.open())
        return;
    arrivals_failed_ = true;  // until nothing is missing again
    const int err = errno;
    host_.log(PW_LOG_VERBOSE,
              "cannot read the kernel's device uevents (%s): a returning device is found by the "
              "reopen backoff alone",
              errno_text(err).c_str());
    (void)now;
}

void Monitor::serve(TimePoint now, const std::vector<pollfd> &fds,
                    const std::vector<VerbsDevice *> &devices, Others others)
{
    if (fds[0].revents) {
        wakeup_.drain();
        if (stopping_)
            return;
        if (resolve_requested_.exchange(false))
            resolve(now);
        take_reports(now);
    }
    // A device closed on the way leaves the pointers of this poll set
    // stale: the rest waits for the next poll(), which reports it again.
    const unsigned long closes = devices_.closes();
    for (size_t i = 1; i <= devices.size() && devices_.closes() == closes; ++i) {
        VerbsDevice &dev = *devices[i - 1];
        if ((fds[i].revents & POLLIN) && !drain_device(dev, now))
            break;
        // Disassociated device: recent kernels report POLLERR, reads fail with EIO.
        if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) {
            const std::string name = dev.name();  // lose() closes dev
            lose(name, fds[i].revents & POLLNVAL ? "POLLNVAL" : "POLLERR", now);
        }
    }
    if (others.arrivals && arrivals_.drain()) {
        host_.log(PW_LOG_VERBOSE, "the kernel added an RDMA device: looking for the missing "
                                  "device(s) now");
        devices_.arrival(now);
    }
    // After the devices: a loss of the watched device is known first.
    if (others.mad_file)
        mad_file_event(others.mad_file, now);
    run_due(now);
}

void Monitor::run_due(TimePoint now)
{
    if (std::optional<TimePoint> due = policy_.deadline(); due && *due <= now)
        hold_off_over(now);
    if (devices_.retry_due(now))
        rescan(now);
    if (std::optional<TimePoint> due = outcome_.deadline(); due && *due <= now)
        check_outcome(now);
    if (std::optional<TimePoint> due = mad_check_.deadline(); due && *due <= now)
        check_mad_path(now);
    if (mad_file_look_at_ && *mad_file_look_at_ <= now)
        look_after_mad_file_died(now);
    awaiting_sweep_ = outcome_.awaiting_sweep();
    if (awaiting_sweep_) {
        // Reports counted before the flag went up woke nobody (report()
        // counts, then reads the flag): take them now, or a sweep that
        // already ended would be waited for until the bound.
        take_reports(now);
        awaiting_sweep_ = outcome_.awaiting_sweep();
    }
    if (!awaiting_sweep_)
        absorb_reports();
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

}  // namespace portwatch
