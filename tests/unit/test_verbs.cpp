// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The device stages on their own, without the event thread: VerbsDevice
// (opening a device, the retries of its queries), Devices (the set: what it
// forgets, what it ignores) and PortResolver with a port GUID named by
// portwatch.port, against the verbs simulator. The paths here are the ones
// the event-thread tests (test_monitor, test_faults) reach rarely or never:
// a context opened and closed again because its device query failed, a
// query that keeps reporting EINTR, a device that would not open and then
// disappeared, and the state and name tables.
#define BOOST_TEST_MODULE portwatch_verbs
#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>

#include "devices.hpp"
#include "expect.hpp"
#include "fake_host.hpp"
#include "options.hpp"
#include "outcome.hpp"
#include "policy.hpp"
#include "port_resolver.hpp"
#include "port_tracker.hpp"
#include "verbs_device.hpp"

#include <portwatch/host.h>

#include <vector>

using namespace pwtest;
using namespace portwatch;

namespace {

constexpr uint64_t kNodeA = 0x0002c90300003000ULL;
constexpr uint64_t kNodeB = 0x0002c90300004000ULL;

Options options(const char *text)
{
    ParsedOptions parsed = parse_options(text);
    BOOST_REQUIRE_MESSAGE(parsed.options, "options refused: " << parsed.error);
    return *parsed.options;
}

// The only device listed, opened with VerbsDevice::open.
std::unique_ptr<VerbsDevice> open_only_device(int *err)
{
    DeviceList list;
    BOOST_REQUIRE(list.ok());
    BOOST_REQUIRE_EQUAL(list.size(), 1);
    *err = 0;
    return VerbsDevice::open(list[0], err);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(verbs_device, Fresh)

// The context is open when the device query fails: open() must close it
// (Fresh checks that no context stays open) and report the query's errno.
BOOST_AUTO_TEST_CASE(a_failing_device_query_closes_the_context)
{
    add_device("mlx5_0", kNodeA);
    vsim("fail query_device errno=EIO");
    int err = 0;
    std::unique_ptr<VerbsDevice> dev = open_only_device(&err);
    BOOST_TEST(!dev);
    BOOST_TEST(err == EIO);
    std::string stats = vsim("stats mlx5_0");
    BOOST_TEST(stat_of(stats, "opens") == "1", stats);
    BOOST_TEST(stat_of(stats, "closes") == "1", stats);
}

// EINTR is retried up to four tries: three fail and the fourth works; four
// in a row are an error, reported as such.
BOOST_AUTO_TEST_CASE(a_device_query_retries_eintr_four_times_then_fails)
{
    add_device("mlx5_0", kNodeA);
    vsim("fail query_device errno=EINTR count=3");
    int err = 0;
    std::unique_ptr<VerbsDevice> dev = open_only_device(&err);
    BOOST_REQUIRE(dev);
    BOOST_TEST(err == 0);
    BOOST_TEST(dev->port_count() == 1u);
    dev.reset();

    vsim("fail query_device errno=EINTR count=5");
    dev = open_only_device(&err);
    BOOST_TEST(!dev);
    BOOST_TEST(err == EINTR);
    // The fifth armed failure is left: exactly four queries were made.
    vsim("fail query_device count=0");
    std::string stats = vsim("stats mlx5_0");
    BOOST_TEST(stat_of(stats, "queries") == "8", stats);
}

// A port whose GID query keeps failing reports the error, not a GUID.
BOOST_AUTO_TEST_CASE(a_gid_query_failing_four_times_reports_its_errno)
{
    add_device("mlx5_0", kNodeA);
    int err = 0;
    std::unique_ptr<VerbsDevice> dev = open_only_device(&err);
    BOOST_REQUIRE(dev);
    uint64_t guid = 0;
    vsim("fail query_gid errno=EAGAIN count=4");
    BOOST_TEST(dev->port_guid(1, &guid) == EAGAIN);
    BOOST_TEST(guid == 0u);
    vsim("fail query_gid errno=EPERM");
    BOOST_TEST(dev->port_guid(1, &guid) == EPERM);
    BOOST_TEST(dev->port_guid(1, &guid) == 0);
    BOOST_TEST(guid == kNodeA + 1);
}

BOOST_AUTO_TEST_CASE(port_states_map_to_link_states)
{
    auto state_of = [](ibv_port_state s) {
        return std::string(link_state_name(link_state_from_verbs(s)));
    };
    BOOST_TEST(state_of(IBV_PORT_NOP) == "DOWN");
    BOOST_TEST(state_of(IBV_PORT_DOWN) == "DOWN");
    BOOST_TEST(state_of(IBV_PORT_INIT) == "INIT");
    BOOST_TEST(state_of(IBV_PORT_ARMED) == "ARMED");
    BOOST_TEST(state_of(IBV_PORT_ACTIVE) == "ACTIVE");
    BOOST_TEST(state_of(IBV_PORT_ACTIVE_DEFER) == "ACTIVE");

    add_device("mlx5_0", kNodeA);
    vsim("port mlx5_0 1 state=armed quiet");
    int err = 0;
    std::unique_ptr<VerbsDevice> dev = open_only_device(&err);
    BOOST_REQUIRE(dev);
    PortInfo info;
    BOOST_REQUIRE_EQUAL(dev->query_port(1, &info), 0);
    BOOST_TEST(std::string(link_state_name(info.snapshot.state)) == "ARMED");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(device_set, Fresh)

// A device that would not open keeps the set retrying while it is listed;
// once it is gone from the list it is forgotten: no timer is left.
BOOST_AUTO_TEST_CASE(a_device_that_would_not_open_is_forgotten_once_unlisted)
{
    FakeHost fake;
    Host host(fake.callbacks());
    Options opts = options("portwatch.retry_max_ms=200");
    Devices devices(host, opts);

    add_device("mlx5_0", kNodeA);
    add_device("mlx5_1", kNodeB);
    vsim("fail open_device errno=EBUSY");
    TimePoint now = Clock::now();
    std::vector<std::string> opened = devices.scan(now);
    BOOST_TEST(opened.size() == 1u);
    BOOST_TEST(fake.count("cannot open verbs device mlx5_0: Device or resource busy") == 1,
               fake.dump());
    BOOST_TEST(devices.retry_at().has_value());

    vsim("remove mlx5_0");
    opened = devices.scan(now + std::chrono::seconds(1));
    BOOST_TEST(opened.empty());
    BOOST_TEST(!devices.find("mlx5_0"));
    BOOST_TEST(devices.find("mlx5_1"));
    BOOST_TEST(!devices.retry_at().has_value(), "a forgotten device still has a retry");
}

// lose() and remember_guid() for a device the set does not hold open (an
// event that raced with its closing) change nothing and log nothing.
BOOST_AUTO_TEST_CASE(lose_and_remember_ignore_devices_not_open)
{
    FakeHost fake;
    Host host(fake.callbacks());
    Options opts = options("portwatch.retry_max_ms=200");
    Devices devices(host, opts);
    add_device("mlx5_0", kNodeA);
    TimePoint now = Clock::now();
    BOOST_REQUIRE_EQUAL(devices.scan(now).size(), 1u);
    size_t logged = fake.lines().size();

    devices.lose("mlx5_9", "test", now);
    devices.remember_guid("mlx5_9", 1, kNodeA + 1);
    BOOST_TEST(fake.lines().size() == logged, fake.dump());
    BOOST_TEST(devices.find("mlx5_0"));

    devices.lose("mlx5_0", "test", now);
    BOOST_TEST(!devices.find("mlx5_0"));
    BOOST_TEST(fake.count("verbs device mlx5_0 failed (test)") == 1, fake.dump());
    devices.lose("mlx5_0", "again", now);
    devices.remember_guid("mlx5_0", 1, kNodeA + 1);
    BOOST_TEST(fake.count("failed (again)") == 0, fake.dump());
    BOOST_TEST(devices.retry_at().has_value());
}

// portwatch.port naming a device that is listed but will not open is not a
// typo (it is retried); one that is not listed while others are is.
BOOST_AUTO_TEST_CASE(spec_error_tells_a_failing_device_from_a_missing_one)
{
    FakeHost fake;
    Host host(fake.callbacks());
    add_device("mlx5_0", kNodeA);
    add_device("mlx5_1", kNodeB);

    Devices failing(host, options("portwatch.port=mlx5_0:1"));
    vsim("fail open_device errno=EIO");
    failing.scan(Clock::now());
    BOOST_TEST(!failing.find("mlx5_0"));
    BOOST_TEST(failing.spec_error() == "");

    Devices missing(host, options("portwatch.port=mlx5_7:1"));
    missing.scan(Clock::now());
    BOOST_TEST(missing.spec_error() ==
               "portwatch.port=mlx5_7:1: no verbs device named mlx5_7 (present: mlx5_0, mlx5_1)");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(port_resolver, Fresh)

// portwatch.port=GUID: the port is found on whichever device has it, and
// only it is watched; a GUID on no port is said once.
BOOST_AUTO_TEST_CASE(a_port_named_by_guid_is_found_on_its_device)
{
    FakeHost fake;
    Host host(fake.callbacks());
    add_device("mlx5_0", kNodeA);
    add_device("mlx5_1", kNodeB);
    Options opts = options("portwatch.port=0x0002c90300004001");
    Devices devices(host, opts);
    BOOST_REQUIRE_EQUAL(devices.scan(Clock::now()).size(), 2u);

    PortResolver resolver(host, opts);
    BOOST_TEST(resolver.resolve(devices));
    BOOST_REQUIRE(resolver.watched());
    BOOST_TEST(resolver.watched()->str() == "mlx5_1:1");
    BOOST_TEST(fake.count("watching mlx5_1:1 (port GUID 0x0002c90300004001, named by "
                          "portwatch.port)") == 1,
               fake.dump());
    BOOST_TEST(resolver.is_watched(PortKey{"mlx5_1", 1}, true));
    BOOST_TEST(!resolver.is_watched(PortKey{"mlx5_0", 1}, true));
    BOOST_TEST(!resolver.resolve(devices), "the same answer twice is no change");

    Options absent = options("portwatch.port=0x0002c90300005001");
    PortResolver nowhere(host, absent);
    BOOST_TEST(nowhere.resolve(devices));
    BOOST_TEST(!nowhere.watched());
    BOOST_TEST(nowhere.looking());
    BOOST_TEST(fake.count("port GUID 0x0002c90300005001 (named by portwatch.port) is on no "
                          "open verbs port") == 1,
               fake.dump());
    BOOST_TEST(nowhere.is_watched(PortKey{"mlx5_0", 1}, true));
    BOOST_TEST(!nowhere.is_watched(PortKey{"mlx5_0", 1}, false));
    BOOST_TEST(!nowhere.resolve(devices), "a port that never resolves is logged once");
}

BOOST_AUTO_TEST_SUITE_END()

// The names the log lines use, and the no-op calls of the pure stages.
BOOST_AUTO_TEST_SUITE(names)

BOOST_AUTO_TEST_CASE(every_link_state_and_change_has_its_name)
{
    BOOST_TEST(std::string(link_state_name(LinkState::Down)) == "DOWN");
    BOOST_TEST(std::string(link_state_name(LinkState::Init)) == "INIT");
    BOOST_TEST(std::string(link_state_name(LinkState::Armed)) == "ARMED");
    BOOST_TEST(std::string(link_state_name(LinkState::Active)) == "ACTIVE");
    BOOST_TEST(std::string(change_name(Change::Initial)) == "initial");
    BOOST_TEST(std::string(change_name(Change::None)) == "no change");
    BOOST_TEST(std::string(change_name(Change::Attributes)) == "attributes changed");
    BOOST_TEST(std::string(change_name(Change::LinkLost)) == "link lost");
    BOOST_TEST(std::string(change_name(Change::LinkBack)) == "link back");
    BOOST_TEST(std::string(change_name(Change::Progress)) == "SM configuring the port");
    BOOST_TEST(std::string(action_name(Action::None)) == "none");
    BOOST_TEST(std::string(action_name(Action::Mark)) == "mark");
    BOOST_TEST(std::string(action_name(Action::Sweep)) == "sweep");
    BOOST_TEST(std::string(action_name(Action::Defer)) == "defer");
}

// A deadline call with nothing deferred (the deferred wake-up was already
// performed) asks nothing of OpenSM; a sweep report with no check waiting
// sets no deadline.
BOOST_AUTO_TEST_CASE(deadline_and_sweep_reports_with_nothing_pending_do_nothing)
{
    Options opts = options("portwatch.holdoff_ms=100");
    Policy policy(opts);
    TimePoint now = Clock::now();
    BOOST_TEST(!policy.deadline().has_value());
    Decision d = policy.on_deadline(PW_SM_MASTER, now);
    BOOST_TEST(std::string(action_name(d.action)) == "none");
    BOOST_TEST(std::string(d.reason) == "nothing deferred");

    Outcome outcome(opts);
    outcome.sweep_progress(now);
    BOOST_TEST(!outcome.awaiting_sweep());
    BOOST_TEST(!outcome.deadline().has_value());
}

BOOST_AUTO_TEST_SUITE_END()

// What the core does when the process runs out of resources, or is handed
// nothing to destroy.
BOOST_AUTO_TEST_SUITE(resources)

// OpenSM calls delete() with what create() returned, NULL after a failed
// create(): nothing to stop, nothing logged.
BOOST_AUTO_TEST_CASE(destroying_no_core_does_nothing)
{
    FakeHost fake;
    pw_core *core = pw_core_create(&fake.callbacks(), "portwatch.holdoff_ms=x", "OpenSM 3.3.23");
    BOOST_TEST(!core);
    size_t logged = fake.lines().size();
    pw_core_destroy(core);
    BOOST_TEST(fake.lines().size() == logged, fake.dump());
    BOOST_TEST(fake.sweeps() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
