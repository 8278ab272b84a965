// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What the event-thread tests (test_monitor, test_faults) share: the
// per-case simulator fixture, and waiting assertions that on timeout end the
// test case with everything the plugin logged so far (the timeouts are
// bounds for a loaded machine, not timings).
#pragma once

#include <boost/test/unit_test.hpp>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "fake_host.hpp"

namespace pwtest {

// Every case starts from an empty simulator with no fault armed, and must
// leave no context open and no delivered event unacknowledged: whatever the
// core opened, it closed (no fd or context leak).
struct Fresh {
    Fresh() { vsim("reset"); }
    ~Fresh()
    {
        std::string stats = vsim("stats");
        BOOST_TEST(stats.find(" open_contexts=0 ") != std::string::npos, stats);
        BOOST_TEST(stats.find(" unacked_at_close=0 ") != std::string::npos, stats);
        vsim("reset");
    }
};

inline void expect_log(const FakeHost &host, const std::string &needle, int n = 1,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(5000))
{
    bool seen = host.wait_for(needle, n, timeout);
    BOOST_REQUIRE_MESSAGE(seen, "no log line '" << needle << "' (x" << n << "):\n" << host.dump());
}

inline void expect_sweeps(const FakeHost &host, int n,
                          std::chrono::milliseconds timeout = std::chrono::milliseconds(5000))
{
    bool seen = host.wait_sweeps(n, timeout);
    BOOST_REQUIRE_MESSAGE(seen, "expected " << n << " sweeps:\n" << host.dump());
}

// Waits until pred() holds; false if it still does not after the bound.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds bound = std::chrono::milliseconds(5000))
{
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

// /proc/self/task/TID of this process's thread named `name` (the event
// thread is "portwatch"); empty when there is none.
inline std::string thread_dir(const std::string &name)
{
    DIR *dir = opendir("/proc/self/task");
    BOOST_REQUIRE(dir);
    std::string found;
    while (dirent *e = readdir(dir)) {
        std::string base = std::string("/proc/self/task/") + e->d_name;
        std::ifstream comm(base + "/comm");
        std::string comm_name;
        if (comm >> comm_name && comm_name == name)
            found = base;
    }
    closedir(dir);
    return found;
}

// The voluntary context switches of the thread named `name`; -1 when none.
inline long thread_switches(const std::string &name)
{
    std::string dir = thread_dir(name);
    if (dir.empty())
        return -1;
    std::ifstream status(dir + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
            return std::stol(line.substr(line.find(':') + 1));
    return -1;
}

}  // namespace pwtest
