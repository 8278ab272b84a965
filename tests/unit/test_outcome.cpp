// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The outcome check on its own (plugin/outcome.hpp): when it looks at the
// port, what it concludes, and that it is bounded. Pure logic: the times are
// made up, nothing sleeps.
#include <boost/test/unit_test.hpp>

#include "outcome.hpp"

using namespace portwatch;
using std::chrono::milliseconds;

namespace {

Options verify(long ms, unsigned tries)
{
    Options o;
    o.verify = Millis(ms);
    o.verify_tries = tries;
    return o;
}

const TimePoint t0 = Clock::now();

TimePoint at(long ms)
{
    return t0 + milliseconds(ms);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(outcome)

BOOST_AUTO_TEST_CASE(idle_has_no_deadline)
{
    Outcome o(verify(1000, 4));
    BOOST_TEST(!o.deadline());
    BOOST_TEST(!o.awaiting_sweep());
}

BOOST_AUTO_TEST_CASE(looks_a_grace_period_after_subnet_up)
{
    Outcome o(verify(1000, 4));
    o.sweep_requested(at(0));
    BOOST_TEST(o.awaiting_sweep());
    o.sweep_progress(at(10));  // HEAVY_SWEEP_START
    o.subnet_up(at(50));
    BOOST_TEST(!o.awaiting_sweep());
    BOOST_REQUIRE(o.deadline());
    BOOST_TEST((*o.deadline() == at(1050)));
    BOOST_TEST((o.on_deadline(LinkState::Active, at(1050)) == Outcome::Verdict::Fine));
    BOOST_TEST(!o.deadline());
}

BOOST_AUTO_TEST_CASE(still_init_retries_with_a_doubling_grace_then_gives_up)
{
    Outcome o(verify(100, 3));
    long now = 0;
    o.sweep_requested(at(now));
    for (unsigned k = 1; k <= 3; ++k) {
        o.subnet_up(at(now += 10));
        BOOST_REQUIRE(o.deadline());
        long grace = 100L << (k - 1);  // 100, 200, 400
        BOOST_TEST((*o.deadline() == at(now + grace)), "try " << k);
        now += grace;
        BOOST_TEST((o.on_deadline(LinkState::Init, at(now)) == Outcome::Verdict::Retry));
        BOOST_TEST(o.tries() == k);
        BOOST_TEST(o.waited().count() == grace);
        o.sweep_requested(at(now));
    }
    o.subnet_up(at(now += 10));
    BOOST_TEST((o.on_deadline(LinkState::Init, *o.deadline()) == Outcome::Verdict::GiveUp));
    BOOST_TEST(!o.deadline());  // never loops
}

BOOST_AUTO_TEST_CASE(a_new_link_change_starts_the_tries_afresh)
{
    Outcome o(verify(100, 1));
    o.sweep_requested(at(0));
    o.subnet_up(at(10));
    BOOST_TEST((o.on_deadline(LinkState::Init, at(110)) == Outcome::Verdict::Retry));
    o.link_changed();
    o.sweep_requested(at(200));
    o.subnet_up(at(210));
    BOOST_TEST((o.on_deadline(LinkState::Init, at(310)) == Outcome::Verdict::Retry));
    BOOST_TEST(o.tries() == 1u);
}

BOOST_AUTO_TEST_CASE(verify_tries_zero_only_says_so)
{
    Outcome o(verify(100, 0));
    o.sweep_requested(at(0));
    o.subnet_up(at(10));
    BOOST_TEST((o.on_deadline(LinkState::Init, at(110)) == Outcome::Verdict::Off));
    BOOST_TEST(!o.deadline());
}

BOOST_AUTO_TEST_CASE(a_sweep_that_never_ends_is_bounded)
{
    Outcome o(verify(100, 4));
    o.sweep_requested(at(0));
    BOOST_REQUIRE(o.deadline());
    TimePoint start_bound = *o.deadline();
    BOOST_TEST((start_bound > at(0)));
    o.sweep_progress(at(10));  // started, never reported done
    BOOST_TEST((*o.deadline() > start_bound));
    // The bound passed with the port INIT: the sweep counts as over now,
    // and the port gets its grace period before a retry.
    TimePoint bound = *o.deadline();
    BOOST_TEST((o.on_deadline(LinkState::Init, bound) == Outcome::Verdict::Wait));
    BOOST_TEST((*o.deadline() == bound + milliseconds(100)));
    BOOST_TEST((o.on_deadline(LinkState::Init, *o.deadline()) == Outcome::Verdict::Retry));
}

BOOST_AUTO_TEST_CASE(recheck_waits_for_a_coming_sweep_or_only_the_grace)
{
    Outcome coming(verify(100, 4));
    coming.recheck(at(0), true);
    BOOST_TEST(coming.awaiting_sweep());
    coming.subnet_up(at(40));
    BOOST_TEST((*coming.deadline() == at(140)));

    Outcome nothing(verify(100, 4));
    nothing.recheck(at(0), false);
    BOOST_TEST(!nothing.awaiting_sweep());
    BOOST_TEST((*nothing.deadline() == at(100)));
    BOOST_TEST((nothing.on_deadline(LinkState::Down, at(100)) == Outcome::Verdict::Fine));
}

BOOST_AUTO_TEST_CASE(recheck_does_not_disturb_a_check_on_its_way)
{
    Outcome o(verify(100, 4));
    o.sweep_requested(at(0));
    o.subnet_up(at(10));
    TimePoint due = *o.deadline();
    o.recheck(at(20), false);
    BOOST_TEST((*o.deadline() == due));
}

BOOST_AUTO_TEST_CASE(after_giving_up_only_a_link_change_starts_again)
{
    Outcome o(verify(100, 1));
    o.sweep_requested(at(0));
    o.subnet_up(at(10));
    BOOST_TEST((o.on_deadline(LinkState::Init, at(110)) == Outcome::Verdict::Retry));
    o.sweep_requested(at(110));
    o.subnet_up(at(120));
    BOOST_TEST((o.on_deadline(LinkState::Init, at(320)) == Outcome::Verdict::GiveUp));
    // An SM that fails to configure its port still changes its LID, SM LID,
    // ...: those looks must not start the tries again (a loop of sweeps).
    o.recheck(at(400), false);
    BOOST_TEST(!o.deadline());
    o.link_changed();
    o.recheck(at(500), false);
    BOOST_REQUIRE(o.deadline());
    BOOST_TEST((o.on_deadline(LinkState::Init, *o.deadline()) == Outcome::Verdict::Retry));
}

BOOST_AUTO_TEST_CASE(settled_ends_the_check)
{
    Outcome o(verify(100, 4));
    o.sweep_requested(at(0));
    o.settled();
    BOOST_TEST(!o.deadline());
    o.subnet_up(at(10));  // a report nobody waits for changes nothing
    BOOST_TEST(!o.deadline());
}

BOOST_AUTO_TEST_SUITE_END()
