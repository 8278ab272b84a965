// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: PortTracker + Policy driven the way the event thread
// (plugin/monitor.cpp) drives them, by an arbitrary sequence of port
// snapshots, SM state changes and the passing of time.
//
// Input: options (hold-off, sweep_on_loss, act_in), then operations:
//   event: time passes, the port is re-queried (new state, LID, SM LID),
//          with the SM in some state; a due hold-off deadline is served
//          before the event (poll() timed out first) or after it in the
//          same round, as serve() does;
//   tick:  time passes; a due deadline is served (possibly late);
//   sm:    the SM changes state.
// At the end time runs on until any deferred deadline has been served.
//
// Invariants checked:
//   1. never more than one trigger (Action::Sweep) per hold-off window:
//      two sweeps are at least holdoff apart;
//   2. no trigger (sweep or mark) unless the SM state passed in is in act_in;
//   3. a final "link back" (the last link change is LinkBack) with the SM in
//      act_in ends in a sweep: at once, or at the deferred deadline (one
//      hold-off after the sweep before it) unless the SM has left act_in by
//      then;
//   4. a deferral always has a deadline in the future, one hold-off after
//      the last sweep; nothing pending, no deadline;
//   5. the tracker's classification agrees with the states: LinkLost only
//      from up to DOWN, LinkBack only to up, from DOWN or from ARMED/ACTIVE
//      to INIT.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "policy.hpp"
#include "port_tracker.hpp"

using namespace portwatch;
using Micros = std::chrono::microseconds;

namespace {

// What happened, printed when an invariant breaks. Built only when the
// failing input is run a second time (tracing), to keep executions fast.
bool tracing = false;
std::string trace;

struct Violation {
    const char *what;
};

[[noreturn]] void fail(const char *what)
{
    if (!tracing)
        throw Violation{what};
    std::fprintf(stderr, "fuzz_policy: invariant broken: %s\ntrace:\n%s", what, trace.c_str());
    std::abort();
}

void note(const char *fmt, long long a = 0, long long b = 0, long long c = 0)
{
    if (!tracing)
        return;
    char line[160];
    std::snprintf(line, sizeof(line), fmt, a, b, c);
    if (trace.size() < 100000)
        trace += line;
}

struct Run {
    Options opts;
    Policy policy;
    PortTracker tracker;
    TimePoint t0 = TimePoint{} + std::chrono::hours(1);
    TimePoint now = t0;
    pw_sm_state sm = PW_SM_MASTER;
    std::optional<TimePoint> last_sweep;
    // The last link change and what it asks for.
    std::optional<Change> last_link;
    TimePoint last_link_time;
    bool last_link_in_act_in = false;
    bool sweep_since_last_link = false;
    bool deadline_refused = false;  // the deferred wake-up met an SM outside act_in

    explicit Run(const Options &o) : opts(o), policy(o) {}

    long long us(TimePoint t) const { return std::chrono::duration_cast<Micros>(t - t0).count(); }

    void check_decision(const Decision &d, pw_sm_state sm_passed, TimePoint at)
    {
        if ((d.action == Action::Sweep || d.action == Action::Mark) &&
            !opts.act_in.contains(sm_passed))
            fail("a trigger while the SM state is not in act_in");
        if (d.action == Action::Sweep) {
            if (last_sweep && at - *last_sweep < opts.holdoff)
                fail("two sweeps within one hold-off window");
            last_sweep = at;
            sweep_since_last_link = true;
            note("  sweep at %lld us\n", us(at));
        }
        std::optional<TimePoint> due = policy.deadline();
        if (d.action == Action::Defer) {
            if (!due || *due <= at)
                fail("a deferral without a deadline in the future");
            if (!last_sweep || *due != *last_sweep + opts.holdoff)
                fail("the deadline is not one hold-off after the last sweep");
        }
        if (d.action == Action::Sweep && due)
            fail("a deadline left pending after a sweep");
    }

    void serve_deadline(TimePoint at)
    {
        std::optional<TimePoint> due = policy.deadline();
        if (!due || *due > at)
            return;
        Decision d = policy.on_deadline(sm, at);
        note("  deadline served at %lld us (sm %lld): action %lld\n", us(at), sm,
             static_cast<long long>(d.action));
        if (d.action != Action::Sweep && d.action != Action::None)
            fail("a deadline did something other than sweep or nothing");
        if (d.action == Action::None && !opts.act_in.contains(sm))
            deadline_refused = true;
        check_decision(d, sm, at);
        if (policy.deadline())
            fail("a deadline still pending after it was served");
    }

    void event(const PortSnapshot &snap, pw_sm_state sm_now, bool deadline_first, Micros late)
    {
        TimePoint at = now;
        std::optional<TimePoint> due = policy.deadline();
        if (due && *due <= at && deadline_first) {
            // poll() timed out at the deadline (possibly a little late),
            // before this event arrived.
            TimePoint served = std::min(at, *due + late);
            serve_deadline(served);
        }
        sm = sm_now;
        Transition t = tracker.update(snap);
        note("event at %lld us: state %lld, sm %lld", us(at), static_cast<long long>(snap.state),
             sm);
        note(" -> change %lld\n", static_cast<long long>(t.change));
        if (t.change != Change::Initial) {
            bool up_before = t.from->link_up(), up_after = snap.link_up();
            if (t.change == Change::LinkLost && !(up_before && !up_after))
                fail("LinkLost without a link going down");
            if (t.change == Change::LinkBack &&
                !(up_after && (!up_before || (snap.state == LinkState::Init &&
                                              (t.from->state == LinkState::Armed ||
                                               t.from->state == LinkState::Active)))))
                fail("LinkBack without a link coming up or retraining");
            if (up_before != up_after && t.change != Change::LinkLost &&
                t.change != Change::LinkBack)
                fail("the link went up or down without a link change");
            Decision d = policy.on_change(t.change, sm, at);
            note("  decision %lld\n", static_cast<long long>(d.action));
            if (t.change == Change::LinkLost || t.change == Change::LinkBack) {
                last_link = t.change;
                last_link_time = at;
                last_link_in_act_in = opts.act_in.contains(sm);
                sweep_since_last_link = false;
                deadline_refused = false;
            }
            check_decision(d, sm, at);
        }
        // serve() looks at the deadline after the events of the round.
        serve_deadline(at);
    }

    void tick(Micros dt, Micros late)
    {
        TimePoint until = now + dt;
        std::optional<TimePoint> due = policy.deadline();
        if (due && *due <= until)
            serve_deadline(std::min(until, *due + late));
        now = until;
    }

    void finish()
    {
        if (std::optional<TimePoint> due = policy.deadline()) {
            now = std::max(now, *due);
            serve_deadline(now);
        }
        if (policy.deadline())
            fail("a deadline left pending at the end");
        if (last_link == Change::LinkBack && last_link_in_act_in && !deadline_refused &&
            !sweep_since_last_link)
            fail("a final link back that never got its sweep");
    }
};

}  // namespace

namespace {

void run_input(const uint8_t *data, size_t size)
{
    FuzzedDataProvider in(data, size);
    Options opts;
    opts.holdoff = Millis(in.ConsumeIntegralInRange<int>(0, 1000));
    opts.sweep_on_loss = in.ConsumeBool();
    uint8_t states = in.ConsumeIntegral<uint8_t>();
    opts.act_in.master = states & 1;
    opts.act_in.discovering = states & 2;
    opts.act_in.standby = states & 4;
    opts.act_in.not_active = states & 8;

    trace.clear();
    note("holdoff %lld ms, sweep_on_loss %lld, act_in bits %lld\n", opts.holdoff.count(),
         opts.sweep_on_loss, states & 15);
    Run run(opts);
    long long max_step_us = (opts.holdoff.count() * 2 + 2) * 1000;
    while (in.remaining_bytes() > 0) {
        switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
        case 1: {  // a port event, after some time
            run.now += Micros(in.ConsumeIntegralInRange<long long>(0, max_step_us));
            PortSnapshot snap;
            snap.state = static_cast<LinkState>(in.ConsumeIntegralInRange<int>(0, 3));
            snap.phys_state = snap.state == LinkState::Down ? 2 : 5;
            snap.lid = in.ConsumeIntegralInRange<uint16_t>(0, 3);
            snap.sm_lid = in.ConsumeIntegralInRange<uint16_t>(0, 3);
            auto sm = static_cast<pw_sm_state>(in.ConsumeIntegralInRange<int>(0, 3));
            bool deadline_first = in.ConsumeBool();
            Micros late(in.ConsumeIntegralInRange<long long>(0, 5000));
            run.event(snap, sm, deadline_first, late);
            break;
        }
        case 2: {  // time passes
            Micros dt(in.ConsumeIntegralInRange<long long>(0, max_step_us));
            Micros late(in.ConsumeIntegralInRange<long long>(0, 5000));
            run.tick(dt, late);
            break;
        }
        case 3:  // the SM changes state between events
            run.sm = static_cast<pw_sm_state>(in.ConsumeIntegralInRange<int>(0, 3));
            note("sm -> %lld\n", run.sm);
            break;
        }
    }
    run.finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try {
        run_input(data, size);
    } catch (const Violation &) {
        tracing = true;  // again, with the trace, to report and abort
        run_input(data, size);
        std::fprintf(stderr, "fuzz_policy: a violation that did not repeat\n");
        std::abort();
    }
    return 0;
}
