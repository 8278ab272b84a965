// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "parsed_options.hpp"
#include "policy.hpp"
#include "telemetry.hpp"

using namespace portwatch;
using pwtest::opts;
using std::chrono::milliseconds;

namespace {

PortSnapshot at(LinkState state)
{
    PortSnapshot s;
    s.state = state;
    s.phys_state = state == LinkState::Down ? 2 : 5;
    s.lid = state == LinkState::Down ? 0 : 1;
    return s;
}

// tracker -> policy, as the event thread runs them: each step is one async
// event whose re-query read back `state`. The event type is not an input at
// all: that is the point. Returns {marks, sweeps}.
struct Counts {
    int marks = 0, sweeps = 0, defers = 0, none = 0;
};

Counts run(const Options &o, LinkState start, const std::vector<LinkState> &reads,
           pw_sm_state sm = PW_SM_MASTER, milliseconds step = milliseconds(1000))
{
    PortTracker tracker;
    Policy policy(o);
    Counts c;
    TimePoint now{};
    tracker.update(at(start));
    auto count = [&c](Action a) {
        c.marks += a == Action::Mark;
        c.sweeps += a == Action::Sweep;
        c.defers += a == Action::Defer;
        c.none += a == Action::None;
    };
    for (LinkState s : reads) {
        now += step;
        if (auto due = policy.deadline(); due && *due <= now)
            count(policy.on_deadline(sm, now).action);
        count(policy.on_change(tracker.update(at(s)).change, sm, now).action);
    }
    if (auto due = policy.deadline())
        count(policy.on_deadline(sm, *due).action);
    return c;
}

using L = LinkState;

}  // namespace

BOOST_AUTO_TEST_SUITE(policy)

// What each driver's event stream reads back for one bounce of the SM port
// (link lost, link back at INIT, the SM activates it, then the SM's own
// LID_CHANGE / CLIENT_REREGISTER / SM_CHANGE echoes). Every row must give
// one mark for the loss and exactly one sweep for the return.
BOOST_AUTO_TEST_CASE(one_bounce_per_driver_style)
{
    struct Row {
        const char *style;
        std::vector<L> reads;
    };
    const std::vector<Row> rows = {
        // mlx5: PORT_ERR(DOWN) PORT_ERR(INIT!) PORT_ACTIVE LID_CHANGE CLIENT_REREGISTER
        {"mlx5", {L::Down, L::Init, L::Active, L::Active, L::Active}},
        // mlx5 with ARMED seen on the way up
        {"mlx5-armed", {L::Down, L::Init, L::Armed, L::Active, L::Active}},
        // mlx4: PORT_ERR, PORT_ACTIVE at INIT, PORT_ACTIVE at ACTIVE, SM_CHANGE
        {"mlx4", {L::Down, L::Init, L::Active, L::Active}},
        // rxe: PORT_ERR, PORT_ACTIVE twice, no INIT state
        {"rxe", {L::Down, L::Active, L::Active}},
        // mlx5, both PORT_ERRs queued before we read: both re-queries see INIT
        {"mlx5-late-read", {L::Down, L::Init, L::Init, L::Active}},
    };
    for (const Row &row : rows) {
        BOOST_TEST_CONTEXT("driver style " << row.style)
        {
            Counts c = run(opts(), L::Active, row.reads);
            BOOST_TEST(c.marks == 1);
            BOOST_TEST(c.sweeps == 1);
            BOOST_TEST(c.defers == 0);
        }
    }
}

BOOST_AUTO_TEST_CASE(loss_unseen_because_both_events_read_late)
{
    // PORT_ERR(DOWN) and PORT_ERR(INIT) queued; the first re-query already
    // reads INIT: ACTIVE -> INIT is the link back. One sweep, no mark.
    Counts c = run(opts(), L::Active, {L::Init, L::Init, L::Active});
    BOOST_TEST(c.sweeps == 1);
    BOOST_TEST(c.marks == 0);
}

BOOST_AUTO_TEST_CASE(sweep_on_loss_wakes_for_the_loss_too)
{
    Counts c = run(opts("portwatch.sweep_on_loss=yes"), L::Active, {L::Down, L::Init, L::Active});
    BOOST_TEST(c.sweeps == 2);
    BOOST_TEST(c.marks == 0);
}

BOOST_AUTO_TEST_CASE(no_feedback_loop_after_recovery)
{
    // The SM configuring its own port produces a stream of events; none is a trigger.
    Counts c = run(opts(), L::Init, {L::Armed, L::Active, L::Active, L::Active, L::Active});
    BOOST_TEST(c.sweeps == 0);
    BOOST_TEST(c.marks == 0);
}

BOOST_AUTO_TEST_CASE(sm_state_gating)
{
    const std::vector<L> bounce{L::Down, L::Init, L::Active};
    BOOST_TEST(run(opts(), L::Active, bounce, PW_SM_STANDBY).sweeps == 0);
    BOOST_TEST(run(opts(), L::Active, bounce, PW_SM_STANDBY).marks == 0);
    BOOST_TEST(run(opts(), L::Active, bounce, PW_SM_NOT_ACTIVE).sweeps == 0);
    BOOST_TEST(run(opts(), L::Active, bounce, PW_SM_DISCOVERING).sweeps == 1);
    BOOST_TEST(run(opts("portwatch.act_in=master"), L::Active, bounce, PW_SM_DISCOVERING).sweeps ==
               0);
    BOOST_TEST(run(opts("portwatch.act_in=standby"), L::Active, bounce, PW_SM_STANDBY).sweeps == 1);
}

BOOST_AUTO_TEST_CASE(holdoff_defers_and_the_last_state_wins)
{
    Policy p(opts("portwatch.holdoff_ms=100"));
    TimePoint t0{};
    BOOST_TEST((p.on_change(Change::LinkBack, PW_SM_MASTER, t0).action == Action::Sweep));
    BOOST_TEST((p.on_change(Change::LinkLost, PW_SM_MASTER, t0 + milliseconds(10)).action ==
                Action::Mark));
    BOOST_TEST((p.on_change(Change::LinkBack, PW_SM_MASTER, t0 + milliseconds(20)).action ==
                Action::Defer));
    BOOST_REQUIRE(p.deadline().has_value());
    BOOST_TEST((*p.deadline() == t0 + milliseconds(100)));
    // The SM configuring the port meanwhile does not cancel the deferred sweep.
    BOOST_TEST((p.on_change(Change::Progress, PW_SM_MASTER, t0 + milliseconds(30)).action ==
                Action::None));
    BOOST_TEST((p.on_deadline(PW_SM_MASTER, t0 + milliseconds(100)).action == Action::Sweep));
    BOOST_TEST(!p.deadline().has_value());
}

BOOST_AUTO_TEST_CASE(a_final_loss_cancels_the_deferred_sweep)
{
    Policy p(opts("portwatch.holdoff_ms=100"));
    TimePoint t0{};
    p.on_change(Change::LinkBack, PW_SM_MASTER, t0);
    p.on_change(Change::LinkLost, PW_SM_MASTER, t0 + milliseconds(10));
    BOOST_TEST((p.on_change(Change::LinkBack, PW_SM_MASTER, t0 + milliseconds(20)).action ==
                Action::Defer));
    BOOST_TEST((p.on_change(Change::LinkLost, PW_SM_MASTER, t0 + milliseconds(30)).action ==
                Action::Mark));
    BOOST_TEST(!p.deadline().has_value());
}

BOOST_AUTO_TEST_CASE(deferred_sweep_respects_sm_state_at_the_deadline)
{
    Policy p(opts("portwatch.holdoff_ms=100"));
    TimePoint t0{};
    p.on_change(Change::LinkBack, PW_SM_MASTER, t0);
    p.on_change(Change::LinkBack, PW_SM_MASTER, t0 + milliseconds(5));
    BOOST_TEST((p.on_deadline(PW_SM_STANDBY, t0 + milliseconds(100)).action == Action::None));
    BOOST_TEST(!p.deadline().has_value());
}

BOOST_AUTO_TEST_CASE(zero_holdoff_never_defers)
{
    Counts c =
        run(opts("portwatch.holdoff_ms=0"), L::Active,
            {L::Down, L::Init, L::Down, L::Init, L::Down, L::Init}, PW_SM_MASTER, milliseconds(0));
    BOOST_TEST(c.sweeps == 3);
    BOOST_TEST(c.defers == 0);
}

BOOST_AUTO_TEST_CASE(flap_storm_is_bounded_by_the_holdoff)
{
    // 10 000 reads 1 ms apart alternating DOWN / INIT, ending at INIT.
    std::vector<L> storm;
    for (int i = 0; i < 5000; ++i) {
        storm.push_back(L::Down);
        storm.push_back(L::Init);
    }
    Counts c =
        run(opts("portwatch.holdoff_ms=100"), L::Active, storm, PW_SM_MASTER, milliseconds(1));
    // 10 s of storm: at most one sweep per 100 ms window, plus the final one.
    BOOST_TEST(c.sweeps <= 10000 / 100 + 1);
    BOOST_TEST(c.sweeps >= 10000 / 100 - 1);  // ... and the storm does not starve it
    BOOST_TEST(c.defers > 0);
}

BOOST_AUTO_TEST_CASE(storm_ending_up_always_ends_with_a_sweep)
{
    // Whatever the phase of the storm, when it ends with the link up the
    // last action taken is a sweep at or after the last "link back".
    for (int n = 1; n < 40; ++n) {
        Policy p(opts("portwatch.holdoff_ms=50"));
        PortTracker tracker;
        tracker.update(at(L::Active));
        TimePoint now{};
        TimePoint last_back{}, last_sweep{};
        bool swept = false;
        for (int i = 0; i < n; ++i) {
            for (L s : {L::Down, L::Init}) {
                now += milliseconds(7);
                if (auto due = p.deadline();
                    due && *due <= now &&
                    p.on_deadline(PW_SM_MASTER, *due).action == Action::Sweep) {
                    last_sweep = *due;
                    swept = true;
                }
                Change ch = tracker.update(at(s)).change;
                if (ch == Change::LinkBack)
                    last_back = now;
                if (p.on_change(ch, PW_SM_MASTER, now).action == Action::Sweep) {
                    last_sweep = now;
                    swept = true;
                }
            }
        }
        if (auto due = p.deadline();
            due && p.on_deadline(PW_SM_MASTER, *due).action == Action::Sweep) {
            last_sweep = *due;
            swept = true;
        }
        BOOST_TEST_CONTEXT("bounces " << n)
        {
            BOOST_TEST(swept);
            BOOST_TEST((last_sweep >= last_back));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(telemetry)

BOOST_AUTO_TEST_CASE(milestones_once_each_after_a_request)
{
    Telemetry t;
    TimePoint t0{};
    BOOST_TEST(!t.on_report(PW_REPORT_HEAVY_SWEEP_START, t0).has_value());
    t.sweep_requested(t0);
    BOOST_TEST(!t.on_report(PW_REPORT_HEAVY_SWEEP_DONE, t0).has_value());  // not started yet
    auto start = t.on_report(PW_REPORT_HEAVY_SWEEP_START, t0 + milliseconds(2));
    BOOST_REQUIRE(start.has_value());
    BOOST_TEST(*start == 2.0);
    BOOST_TEST(!t.on_report(PW_REPORT_HEAVY_SWEEP_START, t0 + milliseconds(3)).has_value());
    BOOST_TEST(*t.on_report(PW_REPORT_HEAVY_SWEEP_DONE, t0 + milliseconds(5)) == 5.0);
    BOOST_TEST(*t.on_report(PW_REPORT_SUBNET_UP, t0 + milliseconds(9)) == 9.0);
    BOOST_TEST(!t.on_report(PW_REPORT_SUBNET_UP, t0 + milliseconds(10)).has_value());
    BOOST_TEST(!t.on_report(PW_REPORT_STATE_CHANGE, t0 + milliseconds(10)).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(telemetry_window)

BOOST_AUTO_TEST_CASE(a_sweep_long_after_the_event_is_not_ours)
{
    Telemetry t;
    TimePoint t0{};
    t.sweep_requested(t0);
    BOOST_TEST(!t.on_report(PW_REPORT_HEAVY_SWEEP_START, t0 + milliseconds(61000)).has_value());
    BOOST_TEST(!t.on_report(PW_REPORT_HEAVY_SWEEP_START, t0 + milliseconds(61001)).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
