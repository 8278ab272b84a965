// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Self-test: async events, driver styles and acknowledgement accounting.
#include <boost/test/unit_test.hpp>

#include "test_helpers.hpp"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <future>
#include <string>
#include <thread>
#include <time.h>

using namespace vt;

namespace {

constexpr Ev port_err(int port = 1)
{
    return Ev{IBV_EVENT_PORT_ERR, port};
}
constexpr Ev port_active(int port = 1)
{
    return Ev{IBV_EVENT_PORT_ACTIVE, port};
}

// Changes port 1 of `dev` to `state` and returns what a context saw.
Evs after(ibv_context *ctx, const std::string &dev, const std::string &state)
{
    ok("port " + dev + " 1 state=" + state);
    return drain(ctx);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(events, ResetFixture)

BOOST_AUTO_TEST_CASE(nonblocking_fd_without_events_gives_eagain)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    set_nonblocking(ctx->async_fd);
    BOOST_TEST(poll_revents(ctx->async_fd, 0) == 0);
    ibv_async_event ev;
    errno = 0;
    BOOST_TEST(ibv_get_async_event(ctx.get(), &ev) == -1);
    BOOST_TEST(errno == EAGAIN);
}

BOOST_AUTO_TEST_CASE(an_event_makes_the_fd_readable_until_it_is_read)
{
    ok("add mlx5_0 ports=2");
    ContextPtr ctx = open("mlx5_0");
    ok("event mlx5_0 2 port_err");
    BOOST_TEST(poll_revents(ctx->async_fd, 1000) == POLLIN);

    ibv_async_event ev;
    BOOST_REQUIRE(ibv_get_async_event(ctx.get(), &ev) == 0);  // blocking fd, but an event is there
    BOOST_TEST(ev.event_type == IBV_EVENT_PORT_ERR);
    BOOST_TEST(ev.element.port_num == 2);
    ibv_ack_async_event(&ev);
    BOOST_TEST(poll_revents(ctx->async_fd, 0) == 0);
}

BOOST_AUTO_TEST_CASE(last_event_gives_the_monotonic_time_an_event_was_queued)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    auto mono_ns = [] {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return static_cast<long long>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    };
    auto reported = [] {
        std::string reply = command("last-event");
        BOOST_REQUIRE(reply.rfind("ok mono_ns=", 0) == 0);
        return std::stoll(reply.substr(11));
    };
    long long before = mono_ns();
    ok("event mlx5_0 1 port_err");
    long long after = mono_ns();
    long long t = reported();
    BOOST_TEST(t >= before);
    BOOST_TEST(t <= after);
    ok("port mlx5_0 1 state=active quiet");  // no event: the time stays
    BOOST_TEST(reported() == t);
    drain(ctx.get());
}

BOOST_AUTO_TEST_CASE(every_context_has_its_own_queue)
{
    ok("add mlx5_0");
    ContextPtr a = open("mlx5_0"), b = open("mlx5_0");
    ok("event mlx5_0 1 sm_change");
    BOOST_TEST(drain(a.get()) == (Evs{Ev{IBV_EVENT_SM_CHANGE, 1}}));
    BOOST_TEST(drain(b.get()) == (Evs{Ev{IBV_EVENT_SM_CHANGE, 1}}));
    BOOST_TEST(stats("mlx5_0")["events_queued"] == 2u);
}

BOOST_AUTO_TEST_CASE(raw_events_do_not_change_state)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    ok("event mlx5_0 1 client_reregister");
    ok("event mlx5_0 1 pkey_change");
    ok("event mlx5_0 0 device_fatal");
    BOOST_TEST(drain(ctx.get()) ==
               (Evs{Ev{IBV_EVENT_CLIENT_REREGISTER, 1}, Ev{IBV_EVENT_PKEY_CHANGE, 1},
                    Ev{IBV_EVENT_DEVICE_FATAL, 0}}));
    ibv_port_attr attr;
    BOOST_TEST(ibv_query_port(ctx.get(), 1, &attr) == 0);  // a raw fatal event kills nothing
    BOOST_TEST(attr.state == IBV_PORT_ACTIVE);
    error("event mlx5_0 0 port_err");
    error("event mlx5_0 1 device_fatal");
    error("event mlx5_0 2 port_err");
}

BOOST_AUTO_TEST_CASE(mlx5_bounce)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    BOOST_TEST(after(ctx.get(), "mlx5_0", "down") == (Evs{port_err()}));
    BOOST_TEST(after(ctx.get(), "mlx5_0", "init") == (Evs{port_err()}));  // yes, ERR on the way up
    BOOST_TEST(after(ctx.get(), "mlx5_0", "armed") == (Evs{}));
    BOOST_TEST(after(ctx.get(), "mlx5_0", "active") == (Evs{port_active()}));
}

BOOST_AUTO_TEST_CASE(mlx4_bounce)
{
    ok("add mlx4_0 style=mlx4");
    ContextPtr ctx = open("mlx4_0");
    BOOST_TEST(after(ctx.get(), "mlx4_0", "down") == (Evs{port_err()}));
    BOOST_TEST(after(ctx.get(), "mlx4_0", "init") == (Evs{port_active()}));
    BOOST_TEST(after(ctx.get(), "mlx4_0", "armed") == (Evs{port_active()}));
    BOOST_TEST(after(ctx.get(), "mlx4_0", "active") == (Evs{port_active()}));
}

BOOST_AUTO_TEST_CASE(rxe_bounce)
{
    ok("add rxe0 style=rxe");
    ContextPtr ctx = open("rxe0");
    BOOST_TEST(after(ctx.get(), "rxe0", "down") == (Evs{port_err()}));
    error("port rxe0 1 state=init");
    error("port rxe0 1 state=armed");
    BOOST_TEST(after(ctx.get(), "rxe0", "active") == (Evs{port_active(), port_active()}));
    error("add rxe1 style=rxe state=init");
}

BOOST_AUTO_TEST_CASE(no_event_without_a_change_or_when_quiet)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    BOOST_TEST(after(ctx.get(), "mlx5_0", "active") == (Evs{}));  // already active

    ok("port mlx5_0 1 state=down quiet");  // the event is lost, the change is not
    BOOST_TEST(drain(ctx.get()) == (Evs{}));
    ibv_port_attr attr;
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.state == IBV_PORT_DOWN);
    BOOST_TEST(attr.phys_state == 2);
}

BOOST_AUTO_TEST_CASE(phys_state_follows_state_unless_given)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    ibv_port_attr attr;
    ok("port mlx5_0 1 state=down phys=disabled");
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.phys_state == 3);
    ok("port mlx5_0 1 state=init");
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.phys_state == 5);
    ok("port mlx5_0 1 phys=4");
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.phys_state == 4);
    BOOST_TEST(attr.state == IBV_PORT_INIT);
    ok("port mlx5_0 1 link=eth");
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.link_layer == IBV_LINK_LAYER_ETHERNET);
}

BOOST_AUTO_TEST_CASE(lid_sm_lid_and_guid_changes)
{
    ok("add mlx5_0 lid=5");
    ContextPtr ctx = open("mlx5_0");
    ok("port mlx5_0 1 lid=5 sm_lid=5");  // unchanged: nothing
    BOOST_TEST(drain(ctx.get()) == (Evs{}));
    ok("port mlx5_0 1 lid=9 sm_lid=3 guid=0x1122334455667788");
    BOOST_TEST(drain(ctx.get()) == (Evs{Ev{IBV_EVENT_LID_CHANGE, 1}, Ev{IBV_EVENT_SM_CHANGE, 1},
                                        Ev{IBV_EVENT_GID_CHANGE, 1}}));
    ibv_gid gid;
    BOOST_REQUIRE(ibv_query_gid(ctx.get(), 1, 0, &gid) == 0);
    BOOST_TEST(gid.global.interface_id == htobe64(0x1122334455667788ULL));
    ibv_port_attr attr;
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.lid == 9);
    BOOST_TEST(attr.sm_lid == 3);

    ok("port mlx5_0 1 state=down lid=0");  // state event first, then the LID one
    BOOST_TEST(drain(ctx.get()) == (Evs{port_err(), Ev{IBV_EVENT_LID_CHANGE, 1}}));
}

BOOST_AUTO_TEST_CASE(a_blocking_reader_wakes_up_on_an_event)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    auto reader = std::async(std::launch::async, [&] {
        ibv_async_event ev;
        int rc = ibv_get_async_event(ctx.get(), &ev);  // blocks: the fd is blocking
        if (rc == 0)
            ibv_ack_async_event(&ev);
        return rc == 0 ? Ev{ev.event_type, ev.element.port_num} : Ev{IBV_EVENT_WQ_FATAL, -1};
    });
    BOOST_TEST((reader.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout));
    ok("port mlx5_0 1 state=down");
    BOOST_REQUIRE((reader.wait_for(std::chrono::seconds(5)) == std::future_status::ready));
    BOOST_TEST(reader.get() == port_err());
}

BOOST_AUTO_TEST_CASE(acks_are_counted_and_unacked_events_reported_at_close)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    ok("event mlx5_0 1 port_err");
    ok("event mlx5_0 1 port_active");
    BOOST_TEST(drain(ctx.get()).size() == 2u);  // drain() acks each event
    ok("event mlx5_0 1 lid_change");
    ibv_async_event ev;
    BOOST_REQUIRE(ibv_get_async_event(ctx.get(), &ev) == 0);  // delivered, not acked
    ctx.reset();                                              // warns on stderr
    auto s = stats("mlx5_0");
    BOOST_TEST(s["events_queued"] == 3u);
    BOOST_TEST(s["events_read"] == 3u);
    BOOST_TEST(s["acks"] == 2u);
    BOOST_TEST(s["unacked_at_close"] == 1u);
}

BOOST_AUTO_TEST_CASE(acking_more_than_was_delivered_aborts)
{
    ok("add mlx5_0");
    Outcome child = in_child([] {
        ibv_device **list = ibv_get_device_list(nullptr);
        ibv_context *ctx = ibv_open_device(list[0]);
        ibv_free_device_list(list);
        raw_command("event mlx5_0 1 port_err");
        ibv_async_event ev;
        if (ibv_get_async_event(ctx, &ev) != 0)
            _exit(3);
        ibv_ack_async_event(&ev);
        ibv_ack_async_event(&ev);  // second ack: must abort
    });
    BOOST_TEST(child.status == 128 + SIGABRT);
    BOOST_TEST(child.err.find("ibv_ack_async_event") != std::string::npos, child.err);
}

BOOST_AUTO_TEST_SUITE_END()
