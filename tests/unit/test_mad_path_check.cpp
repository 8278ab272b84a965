// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The MAD path check on its own (plugin/mad_path_check.hpp): after a device
// reset, when OpenSM's MAD path counts as working or dead. Pure logic: the
// times and counts are made up, nothing sleeps.
#include <algorithm>

#include <boost/test/unit_test.hpp>

#include "mad_path_check.hpp"

using namespace portwatch;
using std::chrono::milliseconds;
using Verdict = MadPathCheck::Verdict;

namespace {

const TimePoint t0 = Clock::now();

TimePoint at(long ms)
{
    return t0 + milliseconds(ms);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mad_path_check)

BOOST_AUTO_TEST_CASE(idle_until_started)
{
    MadPathCheck c(Millis(1000));
    BOOST_TEST(!c.armed());
    BOOST_TEST(!c.deadline());
    c.start(at(0), 100, 5);
    BOOST_TEST(c.armed());
    BOOST_TEST((*c.deadline() == at(1000)));
    BOOST_TEST(!c.sweep_wanted());  // the return's own sweep comes first
    c.cancel();
    BOOST_TEST(!c.deadline());
}

// The usual case on every fabric: the sweep after the return gets answers.
BOOST_AUTO_TEST_CASE(any_smp_received_means_it_works)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    BOOST_TEST((c.on_deadline(at(1000), 101, 6, at(3), true) == Verdict::Works));
    BOOST_TEST(!c.armed());
    BOOST_TEST(c.received_since(101) == 1u);
}

// The counter is OpenSM's 32-bit one: a wrap is a change, not a dead path.
BOOST_AUTO_TEST_CASE(a_wrapped_counter_still_counts)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 0xffffffffu, 0);
    BOOST_TEST((c.on_deadline(at(1000), 2, 1, at(3), true) == Verdict::Works));
    BOOST_TEST(c.received_since(2) == 3u);
}

// A sweep started right after the return; a bound after that start nothing
// has come back: dead.
BOOST_AUTO_TEST_CASE(a_sweep_without_any_answer_is_dead)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    BOOST_TEST((c.on_deadline(at(1000), 100, 6, at(3), true) == Verdict::Wait));
    BOOST_TEST((*c.deadline() == at(1003)));
    BOOST_TEST((c.on_deadline(at(1003), 100, 6, at(3), true) == Verdict::Dead));
    BOOST_TEST(!c.armed());
    BOOST_TEST(c.sweep_started());
}

// A sweep that started late gets its whole bound, counted from its start
// as seen (the latest start's time, never earlier than the first).
BOOST_AUTO_TEST_CASE(a_late_sweep_gets_its_whole_bound)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    BOOST_TEST((c.on_deadline(at(1000), 100, 6, at(900), true) == Verdict::Wait));
    BOOST_TEST((*c.deadline() == at(1900)));
    BOOST_TEST(!c.sweep_wanted());
    // Answers arrive within the bound: fine.
    BOOST_TEST((c.on_deadline(at(1900), 103, 6, at(900), true) == Verdict::Works));
}

// An SM that starts a sweep every few hundred ms (each one failing fast)
// must still be judged: later starts do not move the bound.
BOOST_AUTO_TEST_CASE(later_sweeps_do_not_move_the_bound)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    BOOST_TEST((c.on_deadline(at(1000), 100, 6, at(950), true) == Verdict::Wait));
    BOOST_TEST((c.on_deadline(at(1950), 100, 9, at(1900), true) == Verdict::Dead));
}

// No sweep at all (the return brought none, or the sweeper waits for
// answers a dead path never delivers): each look asks for one, and after
// kStuckLooks looks without a start it is dead.
BOOST_AUTO_TEST_CASE(a_sweeper_that_never_starts_is_dead_after_the_stuck_looks)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    long t = 0;
    for (unsigned look = 1; look < MadPathCheck::kStuckLooks; ++look) {
        t += 1000;
        BOOST_TEST((c.on_deadline(at(t), 100, 5, at(-50), true) == Verdict::Wait));
        BOOST_TEST(c.sweep_wanted(), "look " << look);
        BOOST_TEST((*c.deadline() == at(t + 1000)));
    }
    t += 1000;
    BOOST_TEST((c.on_deadline(at(t), 100, 5, at(-50), true) == Verdict::Dead));
    BOOST_TEST(!c.sweep_started());
    BOOST_TEST(c.waited(at(t)).count() == t);
}

// The requested sweep starts after all, within the stuck looks: judged by
// its bound, and a working path is fine.
BOOST_AUTO_TEST_CASE(the_requested_sweep_starts_and_answers)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    BOOST_TEST((c.on_deadline(at(1000), 100, 5, at(-50), true) == Verdict::Wait));
    BOOST_TEST(c.sweep_wanted());
    BOOST_TEST((c.on_deadline(at(2000), 101, 6, at(1001), true) == Verdict::Works));
}

// A standby sweeps nothing: no sweep is asked for and nothing is judged
// dead; the looks space out (twice the gap each time, up to kMaxSpacing
// bounds). Its polls of the master, answered, say the path works; unanswered,
// it takes over (discovering) and sweeps, and is judged by that sweep.
BOOST_AUTO_TEST_CASE(a_standby_is_never_judged_dead_by_silence)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    long t = 1000;
    long gap = 1000;
    for (int look = 0; look < 12; ++look) {
        BOOST_TEST((c.on_deadline(at(t), 100, 5, at(-50), false) == Verdict::Wait));
        BOOST_TEST(!c.sweep_wanted());
        gap = std::min<long>(gap * 2, 1000L * MadPathCheck::kMaxSpacing);
        BOOST_TEST((*c.deadline() == at(t + gap)), "look " << look);
        t += gap;
    }
    // Taken over: discovering, a sweep started just now.
    BOOST_TEST((c.on_deadline(at(t), 100, 6, at(t - 10), true) == Verdict::Wait));
    BOOST_TEST((*c.deadline() == at(t - 10 + 1000)));
    BOOST_TEST((c.on_deadline(at(t + 990), 100, 6, at(t - 10), true) == Verdict::Dead));
}

// Looks while the SM sweeps nothing do not count towards the stuck looks.
BOOST_AUTO_TEST_CASE(standby_looks_do_not_count_as_stuck)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    long t = 0;
    for (unsigned look = 1; look < MadPathCheck::kStuckLooks; ++look) {
        t += 1000;
        BOOST_TEST((c.on_deadline(at(t), 100, 5, at(-50), true) == Verdict::Wait));
    }
    t += 1000;
    BOOST_TEST((c.on_deadline(at(t), 100, 5, at(-50), false) == Verdict::Wait));
    t += 2000;  // the standby look spaced the next one out
    BOOST_TEST((c.on_deadline(at(t), 100, 5, at(-50), true) == Verdict::Wait));
    BOOST_TEST(c.sweep_wanted());
}

// A new return starts afresh: what the last check saw is forgotten.
BOOST_AUTO_TEST_CASE(a_new_start_forgets_the_last_check)
{
    MadPathCheck c(Millis(1000));
    c.start(at(0), 100, 5);
    BOOST_TEST((c.on_deadline(at(1000), 100, 6, at(900), true) == Verdict::Wait));
    c.start(at(1500), 100, 6);
    BOOST_TEST(!c.sweep_started());
    BOOST_TEST((c.on_deadline(at(2500), 100, 6, at(900), true) == Verdict::Wait));
    BOOST_TEST(c.sweep_wanted());
}

BOOST_AUTO_TEST_SUITE_END()
