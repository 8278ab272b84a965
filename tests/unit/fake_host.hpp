// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A struct pw_host that records what the core asks of OpenSM, for tests.
#pragma once

#include <portwatch/host.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "clock.hpp"

namespace pwtest {

class FakeHost {
public:
    FakeHost();
    const pw_host &callbacks() const { return cb_; }

    std::atomic<pw_sm_state> sm_state{PW_SM_MASTER};
    std::atomic<uint64_t> guid_net{0};  // OpenSM's port GUID, network order
    std::atomic<bool> exiting{false};
    // Set once the plugin was destroyed (OpenSM's delete() returned): from
    // then on every callback is a call into a dead OpenSM, and is counted.
    std::atomic<bool> closed{false};
    std::atomic<int> calls_after_close{0};
    // Runs inside every woken sweep request, as OpenSM's sweeper may report
    // HEAVY_SWEEP_START before the request call has returned. Set before start().
    std::function<void()> on_wake;
    // While above zero, each sm_state() call on the core's side throws
    // std::bad_alloc (and counts one down): an exception on the event thread.
    std::atomic<int> sm_state_throws{0};
    // OpenSM's count of SMPs received. While the MAD path works, each woken
    // sweep request adds one (the port's own HCA answers the sweep's first
    // SMP); a dead path adds none.
    std::atomic<uint32_t> smps{0};
    std::atomic<bool> mad_path_dead{false};
    // request_exit() calls that were granted (exiting is set by them).
    std::atomic<int> exit_requests{0};
    // arm_exit_deadline() calls, the last bound asked for, and those made
    // after an exit was already requested (the deadline must come first).
    std::atomic<int> deadlines{0};
    std::atomic<uint32_t> deadline_ms{0};
    std::atomic<int> deadlines_late{0};
    // OpenSM's umad file as the core sees it (-1: not bound, or none), and
    // mute_error_log() calls (errors_muted: OpenSM's ERROR lines are off).
    std::atomic<int> mad_fd{-1};
    std::atomic<int> mutes{0};
    std::atomic<bool> errors_muted{false};

    void set_guid(uint64_t host_order);
    int sweeps() const;
    int marks() const;
    std::vector<portwatch::TimePoint> sweep_times() const;
    std::vector<std::string> lines() const;
    int count(const std::string &needle) const;
    // By severity: a PW_LOG_SYS_ERROR line counts as PW_LOG_ERROR, a
    // PW_LOG_SYS_INFO line as PW_LOG_INFO.
    int count_level(pw_log_level level) const;
    // Link changes ("link lost" or "link back") that the log window counted
    // into its summary lines instead of writing them one by one.
    int summarised(const std::string &kind) const;
    // Woken sweeps the log tells of: "[action=sweep]" lines and the sweeps
    // counted in summary lines.
    int sweeps_told() const;
    // Lines containing needle that OpenSM would also send to syslog.
    int count_sys(const std::string &needle) const;
    // Lines containing needle logged at `level` or a more severe one.
    int count_logged(const std::string &needle, pw_log_level level) const;
    // Waits until count(needle) >= n; false on timeout.
    bool wait_for(const std::string &needle, int n = 1,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) const;
    bool wait_sweeps(int n,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) const;
    std::string dump() const;  // every line, for failure messages

private:
    static void log_cb(void *ctx, pw_log_level level, const char *line);
    static pw_sm_state sm_state_cb(void *ctx);
    static uint64_t guid_cb(void *ctx);
    static int sweep_cb(void *ctx, int wake);
    static uint32_t smps_cb(void *ctx);
    static int exit_cb(void *ctx);
    static int deadline_cb(void *ctx, uint32_t after_ms);
    static int mad_fd_cb(void *ctx);
    static int mute_cb(void *ctx);

    pw_host cb_;
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::vector<std::pair<pw_log_level, std::string>> lines_;
    std::vector<std::string> sys_lines_;
    std::vector<portwatch::TimePoint> sweep_times_;
    int marks_ = 0;
};

// Runs one verbs simulator command; fails the test on an error reply or
// when the simulator is not preloaded.
std::string vsim(const std::string &command);
// The same without Boost.Test assertions, for threads other than the test's
// own: false (and the reply in *reply) on an error reply or no simulator.
bool try_vsim(const std::string &command, std::string *reply = nullptr);
// "add NAME node_guid=0x... EXTRA": a device in the simulator.
void add_device(const std::string &name, uint64_t node_guid, const std::string &extra = "");
// The value of KEY in a "stats DEV" reply ("?" when absent).
std::string stat_of(const std::string &stats, const std::string &key);

}  // namespace pwtest
