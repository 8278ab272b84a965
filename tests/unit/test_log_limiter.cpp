// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The log window: a burst in full, then counts, one summary per window.
#include <boost/test/unit_test.hpp>

#include "log_limiter.hpp"

using namespace portwatch;
using std::chrono::milliseconds;

BOOST_AUTO_TEST_SUITE(log_limiter)

BOOST_AUTO_TEST_CASE(a_burst_in_full_then_counted_until_the_window_ends)
{
    LogLimiter l(milliseconds(200), 3);
    TimePoint t0{};
    BOOST_TEST(!l.deadline());
    BOOST_TEST(l.admit(t0));
    BOOST_TEST(l.admit(t0 + milliseconds(1)));
    BOOST_TEST(l.admit(t0 + milliseconds(2)));
    BOOST_TEST(!l.deadline());  // nothing counted yet: no timer
    BOOST_TEST(!l.admit(t0 + milliseconds(3)));
    BOOST_TEST(!l.admit(t0 + milliseconds(4)));
    BOOST_REQUIRE(l.deadline());
    BOOST_TEST((*l.deadline() == t0 + milliseconds(200)));
}

BOOST_AUTO_TEST_CASE(a_storm_chains_windows_without_a_burst)
{
    LogLimiter l(milliseconds(100), 2);
    TimePoint t{};
    BOOST_TEST(l.admit(t));
    BOOST_TEST(l.admit(t));
    BOOST_TEST(!l.admit(t));
    for (int window = 1; window <= 5; ++window) {
        TimePoint end = t + milliseconds(100 * window);
        BOOST_REQUIRE(l.deadline());
        BOOST_TEST((*l.deadline() == end));
        l.next_window(end);
        // The storm goes on: nothing in full until it stops.
        BOOST_TEST(!l.admit(end + milliseconds(1)));
    }
}

BOOST_AUTO_TEST_CASE(a_quiet_window_ends_the_chain_and_the_next_line_is_in_full)
{
    LogLimiter l(milliseconds(100), 1);
    TimePoint t{};
    BOOST_TEST(l.admit(t));
    BOOST_TEST(!l.admit(t + milliseconds(10)));
    BOOST_TEST(l.counted() == 1u);
    BOOST_TEST(!l.next_window(t + milliseconds(100)));  // the chain goes on
    // A chained window ends even with nothing in it: the end of the storm.
    BOOST_REQUIRE(l.deadline());
    BOOST_TEST((*l.deadline() == t + milliseconds(200)));
    BOOST_TEST(l.counted() == 0u);
    BOOST_TEST(l.next_window(t + milliseconds(200)));  // closed
    BOOST_TEST(!l.deadline());                         // quiet: no timer
    BOOST_TEST(l.admit(t + milliseconds(250)));
    BOOST_TEST(!l.deadline());
}

BOOST_AUTO_TEST_CASE(lines_a_window_apart_are_all_in_full)
{
    LogLimiter l(milliseconds(100), 1);
    TimePoint t{};
    for (int i = 0; i < 10; ++i)
        BOOST_TEST(l.admit(t + milliseconds(100 * i)));
    BOOST_TEST(!l.deadline());
}

BOOST_AUTO_TEST_CASE(a_zero_holdoff_still_groups_a_storm)
{
    LogLimiter l(milliseconds(0), 1);
    BOOST_TEST(l.window().count() == 100);
    TimePoint t{};
    BOOST_TEST(l.admit(t));
    BOOST_TEST(!l.admit(t + milliseconds(50)));
}

BOOST_AUTO_TEST_SUITE_END()
