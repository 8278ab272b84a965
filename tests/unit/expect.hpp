// Waiting assertions shared by the event-thread tests (test_monitor,
// test_faults): on timeout they end the test case with everything the plugin
// logged so far. The timeouts are bounds for a loaded machine, not timings.
#pragma once

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include "fake_host.hpp"

namespace pwtest {

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

} // namespace pwtest
