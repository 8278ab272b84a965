// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Model-based randomized test of device lifecycles. A seeded generator
// plays what real SM hosts do to OpenSM's verbs device and its link - the
// link bounced for any length, events read late and in bursts, the device
// fatal, removed and back (under its name or another), queries and opens
// failing, the card's other device doing the same, the SM in STANDBY for a
// while, sweeps that fail to configure the port - through the verbs
// simulator, against the plugin driven through its C entry points. A fake
// OpenSM thread answers each woken sweep as OpenSM does: it reports the
// sweep and configures its port (ACTIVE) when the link is up.
//
// After each lifecycle the invariants are checked:
//   - every link return ends with the SM port ACTIVE, within a bound (4 s
//     from the last return, PW_MODEL_RECOVERY_MS);
//   - OpenSM's device, once back (under any name), is open again;
//   - sweeps: none without a link return, at most 1 + verify_tries each;
//   - no sweep once the port is ACTIVE and nothing changes (a sweep the
//     hold-off deferred still runs at the window's end);
//   - reopen attempts and log lines stay bounded (per failing second).
//
// Seeds: PW_MODEL_SEED=N replays one lifecycle (its steps are printed on
// failure); PW_MODEL_FIRST and PW_MODEL_LIFECYCLES choose a range (default
// seeds 1..1000, what make check runs); PW_MODEL_PART=K/N runs the K-th of
// N equal parts of that range (make check runs twelve side by side:
// tests/unit/test_model.sh; a lifecycle mostly waits, 0.3 s of CPU in
// 10 s). The generator uses its own integer
// arithmetic on std::mt19937_64, whose output the standard fixes, so a seed
// means the same steps everywhere.
#define BOOST_TEST_MODULE portwatch_model
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "clock.hpp"
#include "core_plugin.hpp"
#include "expect.hpp"
#include "fake_host.hpp"

using namespace pwtest;
using portwatch::Clock;
using portwatch::TimePoint;
using std::chrono::milliseconds;

namespace {

constexpr uint64_t kNodeA = 0x0002c90300005000ULL;  // OpenSM's device: its port 1
constexpr uint64_t kNodeB = 0x0002c90300005100ULL;  // the card's other device
constexpr uint64_t kSmGuid = kNodeA + 1;
constexpr unsigned kTries = 3;
constexpr long kVerifyMs = 2;
constexpr long kRetryMaxMs = 400;
// Bounds for a loaded 2-core machine, far above what a lifecycle needs
// (tens of milliseconds): they catch a return that is never answered.
constexpr milliseconds kRecoveryBound{8000};
constexpr milliseconds kReopenBound{5000};
constexpr long kSlackMs = 1500;  // scheduling on a loaded machine
// From the last link return to ACTIVE. The slowest seen in 2 000 seeds is
// about 1.1 s (a device back after its reopen backoff); sanitizer builds,
// several times slower, raise it through PW_MODEL_RECOVERY_MS.
constexpr long kRecoveryLimitMs = 4000;

class Rng {
public:
    explicit Rng(uint64_t seed) : gen_(seed) {}
    // Uniform enough in [0, n) for a test generator, and the same everywhere.
    unsigned below(unsigned n) { return static_cast<unsigned>(gen_() % n); }
    unsigned between(unsigned lo, unsigned hi) { return lo + below(hi - lo + 1); }
    bool chance(unsigned percent) { return below(100) < percent; }

private:
    std::mt19937_64 gen_;
};

long env_long(const char *name, long fallback)
{
    const char *v = std::getenv(name);
    return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

// The world as the test made it. Changes to OpenSM's port are made under
// the lock, so the fake SM and the generator never interleave inside one.
struct World {
    std::mutex mu;
    std::string a = "mlx5_0";  // OpenSM's device's current name
    bool a_present = true;
    bool link_up = true;
    bool active = true;        // the SM configured its port since the last return
    bool acting = true;        // SM MASTER (else STANDBY)
    unsigned sm_failures = 0;  // the next sweeps leave the port INIT
    int next_name = 2;
    TimePoint returned_at{};
    TimePoint activated_at{};
    unsigned returns = 0;
};

// OpenSM's side: each woken sweep (coalesced, as OpenSM's sweeper does)
// reports START and DONE, configures the SM port if its link is up, and
// reports SUBNET UP. An SM that starts acting sweeps by itself.
class FakeSm {
public:
    FakeSm(FakeHost &host, World &world, Plugin &plugin)
        : host_(host), world_(world), plugin_(plugin), thread_([this] { run(); })
    {
    }
    ~FakeSm() { stop(); }
    FakeSm(const FakeSm &) = delete;
    FakeSm &operator=(const FakeSm &) = delete;

    void sweep_by_itself() { own_sweep_ = true; }
    void stop()
    {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    unsigned answered() const { return answered_; }

private:
    void run()
    {
        int handled = 0;
        while (!stop_) {
            bool asked = host_.wait_sweeps(handled + 1, milliseconds(5));
            if (!asked && !own_sweep_.exchange(false))
                continue;
            handled = std::max(handled, host_.sweeps());
            sweep();
        }
    }

    void sweep()
    {
        plugin_.report(PW_REPORT_HEAVY_SWEEP_START);
        plugin_.report(PW_REPORT_HEAVY_SWEEP_DONE);  // discovery done: before activation
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            if (world_.acting && world_.a_present && world_.link_up && !world_.active) {
                if (world_.sm_failures > 0) {
                    --world_.sm_failures;
                } else if (try_vsim("port " + world_.a + " 1 state=active")) {
                    world_.active = true;
                    world_.activated_at = Clock::now();
                }
            }
        }
        plugin_.report(PW_REPORT_SUBNET_UP);
        ++answered_;
    }

    FakeHost &host_;
    World &world_;
    Plugin &plugin_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> own_sweep_{false};
    std::atomic<unsigned> answered_{0};
    std::thread thread_;
};

struct Stats {
    unsigned lifecycles = 0;
    unsigned returns = 0;
    unsigned sweeps = 0;
    double slowest_ms = 0;
    double slowest_reopen_ms = 0;
    long slowest_seed = 0;
    double max_opens_per_failing_s = 0;
    unsigned max_lines = 0;
};

unsigned opens()
{
    std::string s = vsim("stats");
    auto at = s.find(" opens=");
    return at == std::string::npos ? 0 : static_cast<unsigned>(std::stoul(s.substr(at + 7)));
}

class Lifecycle {
public:
    Lifecycle(long seed, Stats &stats)
        : seed_(seed), rng_(static_cast<uint64_t>(seed)), stats_(stats)
    {
    }

    void run()
    {
        TimePoint p0 = Clock::now();
        vsim("reset");
        add_a("active");
        vsim(add_cmd("mlx5_1", kNodeB, "active"));
        FakeHost host;
        host.set_guid(kSmGuid);
        std::string options = "portwatch.holdoff_ms=" + std::to_string(rng_.chance(70) ? 0 : 20) +
                              " portwatch.retry_max_ms=" + std::to_string(kRetryMaxMs) +
                              " portwatch.verify_ms=" + std::to_string(kVerifyMs) +
                              " portwatch.verify_tries=" + std::to_string(kTries);
        step("options " + options);
        Plugin plugin(host, options.c_str());
        FakeSm sm(host, world_, plugin);
        host_ = &host;
        plugin_ = &plugin;
        sm_ = &sm;
        require(host.wait_for("watching mlx5_0:1 (port GUID"), "never watched OpenSM's port");
        for (unsigned n = rng_.between(1, 4); n > 0; --n)
            one_step();
        TimePoint p1 = Clock::now();
        settle();
        check();
        TimePoint p2 = Clock::now();
        sm.stop();
        plugin.destroy();
        if (std::getenv("PW_MODEL_PROFILE"))
            std::printf("steps %.0f check %.0f stop %.0f\n", portwatch::ms_between(p0, p1),
                        portwatch::ms_between(p1, p2), portwatch::ms_between(p2, Clock::now()));
        std::string s = vsim("stats");
        require(s.find(" open_contexts=0 ") != std::string::npos, "contexts left open: " + s);
        require(s.find(" unacked_at_close=0 ") != std::string::npos, "events left unacked: " + s);
    }

private:
    std::string add_cmd(const std::string &name, uint64_t node, const char *state)
    {
        char cmd[200];
        std::snprintf(cmd, sizeof(cmd), "add %s node_guid=0x%016llx state=%s", name.c_str(),
                      static_cast<unsigned long long>(node), state);
        return cmd;
    }
    void add_a(const char *state) { vsim(add_cmd(world_.a, kNodeA, state)); }

    void step(const std::string &what) { steps_ += "  " + what + "\n"; }
    void require(bool ok, const std::string &what)
    {
        if (ok)
            return;
        BOOST_FAIL("seed " << seed_ << ": " << what << "\nsteps:\n"
                           << steps_ << "replay: PW_MODEL_SEED=" << seed_
                           << " tests/with-vsim tests/unit/test_model\nlog:\n"
                           << (host_ ? host_->dump() : std::string()));
    }
    void pause(unsigned lo, unsigned hi)
    {
        std::this_thread::sleep_for(milliseconds(rng_.between(lo, hi)));
    }

    // OpenSM's link: down, then back at INIT (mlx5: PORT_ERR both times).
    void link(bool up)
    {
        std::lock_guard<std::mutex> lock(world_.mu);
        if (up == world_.link_up)
            return;
        if (world_.a_present)
            vsim("port " + world_.a + " 1 state=" + (up ? "init" : "down"));
        world_.link_up = up;
        world_.active = false;
        if (up) {
            ++world_.returns;
            world_.returned_at = Clock::now();
        }
    }

    void bounce()
    {
        bool late = rng_.chance(30);
        step(std::string("bounce") + (late ? " (read late)" : ""));
        if (late) {  // the thread sits in its next read while the link bounces
            unsigned ms = rng_.between(20, 120);
            vsim("delay get_async_event ms=" + std::to_string(ms));
            late_until_ = Clock::now() + milliseconds(ms);
        }
        link(false);
        pause(0, 20);
        link(true);
    }

    void burst()
    {
        unsigned n = rng_.between(2, 5);
        step("burst of " + std::to_string(n) + " bounces");
        for (unsigned i = 0; i < n; ++i) {
            link(false);
            link(true);
        }
    }

    void fatal_a()
    {
        bool moved = rng_.chance(50);
        step(std::string("fatal ") + world_.a + (moved ? ", link bounced meanwhile" : ""));
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            if (!world_.a_present)
                return;
            vsim("fatal " + world_.a);
        }
        if (moved) {
            link(false);
            pause(0, 30);
            link(true);
        }
    }

    void remove_a()
    {
        bool abrupt = rng_.chance(30), rename = rng_.chance(40), down = rng_.chance(20);
        unsigned gap = rng_.between(0, 150);
        std::string old;
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            if (!world_.a_present)
                return;
            old = world_.a;
            vsim("remove " + world_.a + (abrupt ? " abrupt" : ""));
            world_.a_present = false;
            world_.active = false;
            world_.link_up = false;
        }
        std::this_thread::sleep_for(milliseconds(gap));
        // Opens still set to fail (failing_opens) would delay the reopen by
        // their own backoff: this step times the device coming back.
        vsim("fail open_device count=0");
        std::unique_lock<std::mutex> lock(world_.mu);
        if (rename)
            world_.a = "mlx5_" + std::to_string(world_.next_name++);
        step("remove " + old + (abrupt ? " abrupt" : "") + ", back as " + world_.a + " after " +
             std::to_string(gap) + " ms, link " + (down ? "down" : "at INIT"));
        add_a(down ? "down" : "init");
        TimePoint back = Clock::now();
        world_.a_present = true;
        if (!down) {
            world_.link_up = true;
            ++world_.returns;
            world_.returned_at = back;
        }
        // Watched again within the retry bound: the device set keeps
        // listing while OpenSM's port is gone, at most retry_max_ms apart.
        std::string name = world_.a;
        lock.unlock();
        bool open =
            try_vsim("wait-open " + name + " timeout_ms=" + std::to_string(kReopenBound.count()));
        double ms = portwatch::ms_between(back, Clock::now());
        stats_.slowest_reopen_ms = std::max(stats_.slowest_reopen_ms, ms);
        require(open && ms <= kRetryMaxMs + kSlackMs,
                name + " back, but not reopened within " + std::to_string(kRetryMaxMs) + " + " +
                    std::to_string(kSlackMs) + " ms (" + std::to_string(ms) + " ms)");
    }

    void other_device()
    {
        switch (rng_.below(4)) {
        case 0:
            step("mlx5_1 bounce");
            vsim("port mlx5_1 1 state=down");
            vsim("port mlx5_1 1 state=init");
            vsim("port mlx5_1 1 state=active");
            break;
        case 1:
            step("mlx5_1 fatal");
            vsim("fatal mlx5_1");
            break;
        case 2:
            step("mlx5_1 removed and back");
            vsim("remove mlx5_1");
            pause(0, 100);
            vsim(add_cmd("mlx5_1", kNodeB, "active"));
            break;
        default:
            step("mlx5_1 events without a change");
            vsim("event mlx5_1 1 lid_change");
            vsim("event mlx5_1 0 device_fatal");
            break;
        }
    }

    void events_without_change()
    {
        static const char *const types[] = {"lid_change", "sm_change", "client_reregister",
                                            "pkey_change", "port_active"};
        std::string type = types[rng_.below(5)];
        step("event " + type + " on OpenSM's port, nothing changed");
        std::lock_guard<std::mutex> lock(world_.mu);
        if (world_.a_present)
            vsim("event " + world_.a + " 1 " + type);
    }

    void failing_queries()
    {
        unsigned ms = rng_.between(200, 700);
        step("every query fails for " + std::to_string(ms) + " ms");
        unsigned before = opens();
        TimePoint t0 = Clock::now();
        vsim("fail query_port count=1000000");
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            if (world_.a_present)
                vsim("event " + world_.a + " 1 lid_change");  // makes the plugin query
        }
        std::this_thread::sleep_for(milliseconds(ms));
        vsim("fail query_port count=0");
        double s = portwatch::ms_between(t0, Clock::now()) / 1000.0;
        unsigned n = opens() - before;
        // Backoff from 100 ms: opens at 0.1, 0.3, 0.7, 1.1 ... s, per device.
        // A reopen every 100 ms (no backoff) is 10 per second per device.
        double bound = 2 * (3 + s * 1000.0 / 200.0);
        stats_.max_opens_per_failing_s = std::max(stats_.max_opens_per_failing_s, n / s);
        require(n <= bound, "reopened " + std::to_string(n) + " times in " + std::to_string(s) +
                                " s of failing queries (bound " + std::to_string(bound) + ")");
    }

    void failing_opens()
    {
        unsigned n = rng_.between(1, 4);
        step("fatal " + world_.a + " and its next " + std::to_string(n) + " opens fail");
        std::lock_guard<std::mutex> lock(world_.mu);
        if (!world_.a_present)
            return;
        vsim("fail open_device count=" + std::to_string(n));
        vsim("fatal " + world_.a);
    }

    void standby_for_a_while()
    {
        bool bounced = rng_.chance(70);
        step(std::string("SM in STANDBY for a while") +
             (bounced ? ", link bounced meanwhile" : ""));
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            world_.acting = false;
        }
        host_->sm_state = PW_SM_STANDBY;
        plugin_->report(PW_REPORT_STATE_CHANGE);
        if (bounced) {
            link(false);
            pause(0, 30);
            link(true);
        }
        pause(0, 50);
        become_master();
    }

    void become_master()
    {
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            if (world_.acting)
                return;
            world_.acting = true;
        }
        host_->sm_state = PW_SM_MASTER;
        plugin_->report(PW_REPORT_STATE_CHANGE);
        sm_->sweep_by_itself();
    }

    void failing_sweeps()
    {
        unsigned n = rng_.between(1, kTries - 1);
        step(std::to_string(n) + " sweep(s) fail to configure the port, then a bounce");
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            world_.sm_failures = n;
        }
        link(false);
        link(true);
    }

    void one_step()
    {
        switch (rng_.below(10)) {
        case 0:
        case 1:
            bounce();
            break;
        case 2:
            burst();
            break;
        case 3:
            fatal_a();
            break;
        case 4:
            remove_a();
            break;
        case 5:
            other_device();
            break;
        case 6:
            events_without_change();
            break;
        case 7:
            rng_.chance(20) ? failing_queries() : failing_opens();
            break;
        case 8:
            standby_for_a_while();
            break;
        default:
            failing_sweeps();
            break;
        }
        pause(0, 10);
    }

    // Brings the world to rest: link up, SM acting, no fault armed.
    void settle()
    {
        vsim("fail query_port count=0");
        vsim("fail open_device count=0");
        vsim("delay get_async_event ms=0 count=0");
        link(true);
        become_master();
    }

    void check()
    {
        std::string name;
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            name = world_.a;
        }
        // OpenSM's device, back under whatever name, is open and watched.
        require(
            try_vsim("wait-open " + name + " timeout_ms=" + std::to_string(kReopenBound.count())),
            "OpenSM's device " + name + " was not reopened within " +
                std::to_string(kReopenBound.count()) + " ms");
        require(host_->wait_for("watching " + name + ":1 (port GUID", 1, kReopenBound),
                "OpenSM's port is not watched again as " + name + ":1");
        // Every return ends with the SM port ACTIVE.
        TimePoint deadline = Clock::now() + kRecoveryBound;
        bool active = false;
        while (!(active = world_active()) && Clock::now() < deadline)
            std::this_thread::sleep_for(milliseconds(2));
        require(active, "the SM port is not ACTIVE " + std::to_string(kRecoveryBound.count()) +
                            " ms after the world came to rest");
        unsigned returns;
        double recovery = 0;
        {
            std::lock_guard<std::mutex> lock(world_.mu);
            returns = world_.returns;
            if (returns)
                recovery = portwatch::ms_between(world_.returned_at, world_.activated_at);
        }
        // And promptly: a return answered only by the outcome check's last
        // resort (its 5 s wait for a sweep that never comes) is a bug.
        long limit = env_long("PW_MODEL_RECOVERY_MS", kRecoveryLimitMs);
        require(recovery <= limit, "the last link return took " + std::to_string(recovery) +
                                       " ms to end ACTIVE (limit " + std::to_string(limit) +
                                       " ms, PW_MODEL_RECOVERY_MS)");
        // The plugin must first have done all the world gave it: a sweep
        // the hold-off deferred runs at the window's end even with the port
        // ACTIVE again (the return it answers was real), and events read
        // just now may still be on their way to a decision.
        wait_quiet();
        // Quiet: with the port ACTIVE nothing more is swept. Any check still
        // due ends within the longest grace (verify_ms << verify_tries);
        // watch for twice that.
        int settled = host_->sweeps();
        std::this_thread::sleep_for(milliseconds(2 * (kVerifyMs << kTries) + 20));
        int sweeps = host_->sweeps();
        require(sweeps == settled, "swept again with the port ACTIVE (" + std::to_string(settled) +
                                       " -> " + std::to_string(sweeps) + ")");
        // No sweep without a link return; at most 1 + verify_tries each.
        unsigned allowed = returns * (1 + kTries);
        require(static_cast<unsigned>(sweeps) <= allowed,
                std::to_string(sweeps) + " sweeps for " + std::to_string(returns) +
                    " link returns (at most " + std::to_string(allowed) + ")");
        unsigned lines = static_cast<unsigned>(host_->lines().size());
        unsigned line_bound =
            40 + 60 * static_cast<unsigned>(std::count(steps_.begin(), steps_.end(), '\n'));
        require(lines <= line_bound,
                std::to_string(lines) + " log lines (bound " + std::to_string(line_bound) + ")");
        ++stats_.lifecycles;
        stats_.returns += returns;
        stats_.sweeps += static_cast<unsigned>(sweeps);
        stats_.max_lines = std::max(stats_.max_lines, lines);
        if (std::getenv("PW_MODEL_VERBOSE"))
            BOOST_TEST_MESSAGE("seed " << seed_ << ": recovery " << recovery << " ms\nsteps:\n"
                                       << steps_ << "log:\n"
                                       << host_->dump());
        if (recovery > stats_.slowest_ms) {
            stats_.slowest_ms = recovery;
            stats_.slowest_seed = seed_;
        }
    }

    // Waits until the plugin is at rest: no deferred sweep pending, every
    // sweep it logged ("[action=sweep]", written just before the call)
    // delivered, no delayed read still sleeping, and nothing read, queried
    // or logged over three looks 10 ms apart.
    void wait_quiet()
    {
        TimePoint until = Clock::now() + kRecoveryBound;
        // A thread asleep inside a delayed read looks quiet: let any such
        // read end first (it starts at the first event after arming).
        while (Clock::now() < late_until_ + milliseconds(50))
            std::this_thread::sleep_for(milliseconds(5));
        std::string last;
        int stable = 0;
        while (Clock::now() < until) {
            std::string now = vsim("stats") + " lines=" + std::to_string(host_->lines().size()) +
                              " sweeps=" + std::to_string(host_->sweeps());
            bool done = !deferral_pending() && host_->sweeps() >= host_->sweeps_told();
            stable = done && now == last ? stable + 1 : 0;
            if (stable >= 3)
                return;
            last = now;
            std::this_thread::sleep_for(milliseconds(10));
        }
        require(false, "the plugin did not come to rest within " +
                           std::to_string(kRecoveryBound.count()) + " ms");
    }

    // True while the last wake-up decision logged was a deferral: its sweep
    // is still to come at the end of the hold-off window. (Lines that
    // decide nothing - "no trigger" - do not end a deferral; a sweep, a
    // link loss or an SM state outside act_in do. A log window's summary
    // tells the last decision it counted; the sweep that ends a deferral it
    // counted is told by the summary of the window after it. A summary
    // whose last action is none but which counted a link lost or back
    // counted a link change that decided nothing, in an SM state outside
    // act_in: that ends a deferral too.)
    bool deferral_pending() const
    {
        const std::vector<std::string> lines = host_->lines();
        for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
            if (it->rfind("in the last ", 0) == 0) {
                if (it->find("[last action=none]") == std::string::npos)
                    return it->find("[last action=defer]") != std::string::npos;
                if (summary_counted_link_change(*it))
                    return false;
                continue;
            }
            if (it->find("[action=") == std::string::npos ||
                it->find("no trigger") != std::string::npos)
                continue;
            return it->find("[action=defer]") != std::string::npos;
        }
        return false;
    }

    // "in the last T ms: N link lost, M link back, ...": N + M > 0.
    static bool summary_counted_link_change(const std::string &line)
    {
        long long ms = 0;
        unsigned lost = 0, back = 0;
        return std::sscanf(line.c_str(), "in the last %lld ms: %u link lost, %u link back", &ms,
                           &lost, &back) == 3 &&
               lost + back > 0;
    }

    bool world_active()
    {
        std::lock_guard<std::mutex> lock(world_.mu);
        return world_.active;
    }

    long seed_;
    Rng rng_;
    Stats &stats_;
    World world_;
    std::string steps_;
    TimePoint late_until_{};  // a delayed read armed by bounce() ends by then
    FakeHost *host_ = nullptr;
    Plugin *plugin_ = nullptr;
    FakeSm *sm_ = nullptr;
};

}  // namespace

BOOST_AUTO_TEST_CASE(device_lifecycles_against_the_model)
{
    long first = env_long("PW_MODEL_SEED", 0);
    long count = 1;
    if (first == 0) {
        first = env_long("PW_MODEL_FIRST", 1);
        count = env_long("PW_MODEL_LIFECYCLES", 1000);
        long part = 0, parts = 0;
        if (const char *p = std::getenv("PW_MODEL_PART")) {
            BOOST_REQUIRE_MESSAGE(std::sscanf(p, "%ld/%ld", &part, &parts) == 2 && parts > 0 &&
                                      part >= 1 && part <= parts,
                                  "PW_MODEL_PART='" << p << "': want K/N, 1 <= K <= N");
            // Part K: seeds [first + (K-1)*count/N, first + K*count/N).
            long lo = first + (part - 1) * count / parts, hi = first + part * count / parts;
            first = lo;
            count = hi - lo;
        }
    }
    BOOST_TEST_MESSAGE("model: seeds " << first << ".." << first + count - 1);
    Stats stats;
    TimePoint t0 = Clock::now();
    for (long seed = first; seed < first + count; ++seed)
        Lifecycle(seed, stats).run();
    double s = portwatch::ms_between(t0, Clock::now()) / 1000.0;
    BOOST_TEST(stats.lifecycles == static_cast<unsigned>(count));
    std::ostringstream out;
    out << "model: " << stats.lifecycles << " lifecycles (seeds " << first << ".."
        << first + count - 1 << ") in " << s << " s, 0 violations; " << stats.returns
        << " link returns, " << stats.sweeps << " sweeps; slowest recovery " << stats.slowest_ms
        << " ms (seed " << stats.slowest_seed << "); slowest reopen of a device back "
        << stats.slowest_reopen_ms << " ms; reopens per failing second at most "
        << stats.max_opens_per_failing_s << "; at most " << stats.max_lines
        << " log lines in a lifecycle";
    BOOST_TEST_MESSAGE(out.str());
    std::printf("%s\n", out.str().c_str());
}
