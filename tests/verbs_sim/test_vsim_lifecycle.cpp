// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Self-test: device removal, fatal errors, fault injection, waits and stats.
#include <boost/test/unit_test.hpp>

#include "test_helpers.hpp"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <future>
#include <thread>

using namespace vt;

namespace {

bool listed(const std::string &name)
{
    auto names = device_names();
    return std::find(names.begin(), names.end(), name) != names.end();
}

int get_event_errno(ibv_context *ctx)
{
    ibv_async_event ev;
    errno = 0;
    int rc = ibv_get_async_event(ctx, &ev);
    if (rc == 0) {
        ibv_ack_async_event(&ev);
        return 0;
    }
    return errno;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(lifecycle, ResetFixture)

// Like the kernel on hot unplug: DEVICE_FATAL first, then the event file
// reports POLLERR and reads fail with EIO.
BOOST_AUTO_TEST_CASE(removal_gives_device_fatal_then_pollerr_and_eio)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    set_nonblocking(ctx->async_fd);
    ok("remove mlx5_0");
    BOOST_TEST(!listed("mlx5_0"));

    BOOST_TEST(poll_revents(ctx->async_fd, 1000) == POLLIN);
    int last_errno = 0;
    BOOST_TEST(drain(ctx.get(), &last_errno) == (Evs{Ev{IBV_EVENT_DEVICE_FATAL, 0}}));
    BOOST_TEST(last_errno == EIO);  // right after the last queued event

    BOOST_TEST((poll_revents(ctx->async_fd, 1000) & POLLERR) != 0);
    BOOST_TEST(get_event_errno(ctx.get()) == EIO);
    BOOST_TEST(get_event_errno(ctx.get()) == EIO);  // and stays so

    ibv_port_attr attr;
    BOOST_TEST(ibv_query_port(ctx.get(), 1, &attr) == EIO);
    ibv_gid gid;
    errno = 0;
    BOOST_TEST(ibv_query_gid(ctx.get(), 1, 0, &gid) == -1);
    BOOST_TEST(errno == EIO);
    ibv_device_attr dattr;
    BOOST_TEST(ibv_query_device(ctx.get(), &dattr) == EIO);

    // The fd number stays valid until ibv_close_device, which closes it once.
    int fd = ctx->async_fd;
    BOOST_TEST(fcntl(fd, F_GETFD) != -1);
    BOOST_TEST(ibv_close_device(ctx.release()) == 0);
    BOOST_TEST(fcntl(fd, F_GETFD) == -1);
    BOOST_TEST(stats("mlx5_0")["open_contexts"] == 0u);
}

BOOST_AUTO_TEST_CASE(abrupt_removal_wakes_a_blocked_reader_with_eio)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");  // blocking fd
    auto reader = std::async(std::launch::async, [&] { return get_event_errno(ctx.get()); });
    BOOST_TEST((reader.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout));
    ok("remove mlx5_0 abrupt");
    BOOST_REQUIRE((reader.wait_for(std::chrono::seconds(5)) == std::future_status::ready));
    BOOST_TEST(reader.get() == EIO);
    BOOST_TEST((poll_revents(ctx->async_fd, 0) & POLLERR) != 0);
}

BOOST_AUTO_TEST_CASE(removal_wakes_a_blocked_reader_with_device_fatal)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    auto reader = std::async(std::launch::async, [&] {
        ibv_async_event ev;
        int rc = ibv_get_async_event(ctx.get(), &ev);
        if (rc == 0)
            ibv_ack_async_event(&ev);
        return rc == 0 ? ev.event_type : IBV_EVENT_WQ_FATAL;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ok("remove mlx5_0");
    BOOST_REQUIRE((reader.wait_for(std::chrono::seconds(5)) == std::future_status::ready));
    BOOST_TEST(reader.get() == IBV_EVENT_DEVICE_FATAL);
    BOOST_TEST(get_event_errno(ctx.get()) == EIO);
}

BOOST_AUTO_TEST_CASE(old_device_pointer_gives_enodev_and_readding_makes_a_new_device)
{
    ok("add mlx5_0");
    ContextPtr old_ctx = open("mlx5_0");
    DeviceList old_list = device_list();
    ibv_device *old_dev = find_device(old_list, "mlx5_0");
    ok("remove mlx5_0");
    errno = 0;
    BOOST_TEST(ibv_open_device(old_dev) == nullptr);
    BOOST_TEST(errno == ENODEV);
    BOOST_TEST(std::string(ibv_get_device_name(old_dev)) == "mlx5_0");  // still a valid object
    error("remove mlx5_0");

    ok("add mlx5_0");
    BOOST_TEST(listed("mlx5_0"));
    ContextPtr fresh = open("mlx5_0");
    BOOST_TEST(fresh->device != old_dev);
    ibv_port_attr attr;
    BOOST_TEST(ibv_query_port(fresh.get(), 1, &attr) == 0);
    BOOST_TEST(ibv_query_port(old_ctx.get(), 1, &attr) == EIO);  // old context stays dead
    ok("port mlx5_0 1 state=down");
    BOOST_TEST(drain(fresh.get()) == (Evs{Ev{IBV_EVENT_PORT_ERR, 1}}));
}

BOOST_AUTO_TEST_CASE(fatal_gives_device_fatal_then_eio_and_reopen_works)
{
    ok("add mlx5_0");
    ContextPtr ctx = open("mlx5_0");
    ok("fatal mlx5_0");
    BOOST_TEST(drain(ctx.get()) == (Evs{Ev{IBV_EVENT_DEVICE_FATAL, 0}}));
    ibv_port_attr attr;
    BOOST_TEST(ibv_query_port(ctx.get(), 1, &attr) == EIO);
    ok("port mlx5_0 1 state=down");
    BOOST_TEST(drain(ctx.get()) == (Evs{}));  // a dead context gets nothing more
    BOOST_TEST(listed("mlx5_0"));             // the device itself is still there

    ContextPtr fresh = open("mlx5_0");
    BOOST_REQUIRE(ibv_query_port(fresh.get(), 1, &attr) == 0);
    BOOST_TEST(attr.state == IBV_PORT_DOWN);
    ok("port mlx5_0 1 state=active");
    BOOST_TEST(drain(fresh.get()) == (Evs{Ev{IBV_EVENT_PORT_ACTIVE, 1}}));
}

BOOST_AUTO_TEST_CASE(fault_injection)
{
    ok("add mlx5_0");
    DeviceList list = device_list();
    ibv_device *dev = find_device(list, "mlx5_0");

    ok("fail open_device errno=ENOMEM count=2");
    for (int i = 0; i < 2; ++i) {
        errno = 0;
        BOOST_TEST(ibv_open_device(dev) == nullptr);
        BOOST_TEST(errno == ENOMEM);
    }
    ContextPtr ctx(ibv_open_device(dev));
    BOOST_REQUIRE(ctx);

    ibv_port_attr attr;
    ok("fail query_port");
    BOOST_TEST(ibv_query_port(ctx.get(), 1, &attr) == EIO);  // default errno EIO, count 1
    BOOST_TEST(ibv_query_port(ctx.get(), 1, &attr) == 0);

    ibv_gid gid;
    ok("fail query_gid errno=EAGAIN");
    errno = 0;
    BOOST_TEST(ibv_query_gid(ctx.get(), 1, 0, &gid) == -1);
    BOOST_TEST(errno == EAGAIN);

    ibv_device_attr dattr;
    ok("fail query_device errno=5");
    BOOST_TEST(ibv_query_device(ctx.get(), &dattr) == 5);

    ok("fail get_device_list errno=ENODEV");
    errno = 0;
    BOOST_TEST(ibv_get_device_list(nullptr) == nullptr);
    BOOST_TEST(errno == ENODEV);

    // An interrupted read leaves the event queued.
    ok("event mlx5_0 1 port_err");
    ok("fail get_async_event errno=EINTR");
    BOOST_TEST(get_event_errno(ctx.get()) == EINTR);
    BOOST_TEST(drain(ctx.get()) == (Evs{Ev{IBV_EVENT_PORT_ERR, 1}}));

    ok("fail query_port count=5");
    ok("fail query_port count=0");  // disarms
    BOOST_TEST(ibv_query_port(ctx.get(), 1, &attr) == 0);
}

// A delay makes the next calls slow (the plugin is caught inside them:
// e.g. SIGTERM during create()), without blocking other threads.
BOOST_AUTO_TEST_CASE(delays)
{
    ok("add mlx5_0");
    DeviceList list = device_list();
    ibv_device *dev = find_device(list, "mlx5_0");
    ok("delay open_device ms=1000 count=1");
    auto t0 = std::chrono::steady_clock::now();
    // The registry is not locked meanwhile. (No Boost.Test tool off the
    // main thread: they are not thread-safe.)
    int other_rc = -1;
    std::thread other([&] { other_rc = raw_command("stats"); });
    ContextPtr ctx(ibv_open_device(dev));
    auto ms = [](auto d) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    long long slow = ms(std::chrono::steady_clock::now() - t0);
    other.join();
    BOOST_TEST(other_rc == 0);
    BOOST_REQUIRE(ctx);
    BOOST_TEST(slow >= 1000);
    t0 = std::chrono::steady_clock::now();
    ContextPtr again(ibv_open_device(dev));
    BOOST_REQUIRE(again);
    // Only the first call was delayed (a generous bound: a loaded machine
    // is slow, but not by the second the delay would take).
    BOOST_TEST(ms(std::chrono::steady_clock::now() - t0) < 900);
    ok("delay query_port ms=0 count=0");
    error("delay nosuch ms=1");
    error("delay query_port");
}

BOOST_AUTO_TEST_CASE(wait_open_and_wait_closed)
{
    ok("add mlx5_0");
    BOOST_TEST(error("wait-open mlx5_0 timeout_ms=50").find("mlx5_0") != std::string::npos);
    ok("wait-closed mlx5_0 timeout_ms=0");

    DeviceList list = device_list();
    ibv_device *dev = find_device(list, "mlx5_0");
    BOOST_REQUIRE(dev);
    auto opener = std::async(std::launch::async, [dev] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return ContextPtr(ibv_open_device(dev));  // no Boost.Test tool off the main thread
    });
    ok("wait-open mlx5_0 timeout_ms=5000");
    ContextPtr ctx = opener.get();
    BOOST_REQUIRE(ctx);
    error("wait-closed mlx5_0 timeout_ms=50");

    ok("fatal mlx5_0");  // a dead context is not "live" but still open
    error("wait-open mlx5_0 timeout_ms=50");
    error("wait-closed mlx5_0 timeout_ms=50");
    drain(ctx.get());
    auto closer = std::async(std::launch::async, [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ctx.reset();
    });
    ok("wait-closed mlx5_0 timeout_ms=5000");
    closer.get();
}

BOOST_AUTO_TEST_CASE(stats_per_device_and_totals)
{
    ok("add a");
    ok("add b");
    ContextPtr a = open("a"), b1 = open("b"), b2 = open("b");
    ibv_port_attr attr;
    ibv_query_port(a.get(), 1, &attr);
    ok("event b 1 port_err");
    b2.reset();
    auto sa = stats("a"), sb = stats("b"), total = stats();
    BOOST_TEST(sa["opens"] == 1u);
    BOOST_TEST(sa["queries"] == 1u);
    BOOST_TEST(sb["opens"] == 2u);
    BOOST_TEST(sb["closes"] == 1u);
    BOOST_TEST(sb["open_contexts"] == 1u);
    BOOST_TEST(sb["events_queued"] == 2u);
    BOOST_TEST(total["opens"] == 3u);
    BOOST_TEST(total["open_contexts"] == 2u);
    BOOST_TEST(total["queries"] == 1u);
    error("stats nosuch");

    ok("remove a");  // stats of a removed device stay readable
    BOOST_TEST(stats("a")["opens"] == 1u);
    drain(b1.get());
}

BOOST_AUTO_TEST_SUITE_END()
