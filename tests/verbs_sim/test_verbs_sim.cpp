// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Self-test of the libibverbs simulator: device list, contexts and queries.
// Events, lifecycle and the control paths live in the other test_vsim_*.cpp
// files of the same test program.
#define BOOST_TEST_MODULE verbs_sim
#define BOOST_TEST_DYN_LINK
#include <boost/test/unit_test.hpp>

#include "test_helpers.hpp"

#include <dlfcn.h>
#include <endian.h>
#include <fcntl.h>

#include <cerrno>
#include <csignal>
#include <cstring>

using namespace vt;

// Without the simulator this program would talk to the real libibverbs; that
// must be a failure, never a skip.
BOOST_AUTO_TEST_CASE(simulator_is_preloaded_and_versioned)
{
    void *cmd = dlsym(RTLD_DEFAULT, "vsim_command");
    BOOST_REQUIRE_MESSAGE(cmd, "vsim_command not found: libvsim.so is not preloaded");
    Dl_info sim{};
    BOOST_REQUIRE(dladdr(cmd, &sim));

    // Programs linked against libibverbs ask for IBVERBS_1.1; the simulator
    // must answer for that version, not just for the bare names.
    for (const char *name :
         {"ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name",
          "ibv_get_device_guid", "ibv_open_device", "ibv_close_device", "ibv_query_device",
          "ibv_query_port", "ibv_query_gid", "ibv_query_pkey", "ibv_get_async_event",
          "ibv_ack_async_event", "ibv_event_type_str", "ibv_port_state_str", "ibv_node_type_str"}) {
        void *fn = dlvsym(RTLD_DEFAULT, name, "IBVERBS_1.1");
        Dl_info info{};
        BOOST_TEST_REQUIRE(fn != nullptr, name);
        BOOST_REQUIRE(dladdr(fn, &info));
        BOOST_TEST(info.dli_fbase == sim.dli_fbase, name << " resolves to " << info.dli_fname);
    }
    // And the references this very program was linked with go there too.
    Dl_info info{};
    BOOST_REQUIRE(dladdr(reinterpret_cast<void *>(&ibv_open_device), &info));
    BOOST_TEST(info.dli_fbase == sim.dli_fbase);
}

BOOST_FIXTURE_TEST_SUITE(devices, ResetFixture)

BOOST_AUTO_TEST_CASE(no_devices_is_an_empty_array_not_null)
{
    int num = -1;
    DeviceList list = device_list(&num);
    BOOST_TEST(num == 0);
    BOOST_TEST(list.get()[0] == nullptr);
    DeviceList again = device_list(nullptr);  // num_devices is optional
    BOOST_TEST(again.get()[0] == nullptr);
}

BOOST_AUTO_TEST_CASE(list_holds_present_devices_with_their_fields)
{
    ok("add mlx5_0");
    ok("add mlx4_0 style=mlx4 ports=2 node_guid=0x0002c90300abcd00");
    int num = 0;
    DeviceList list = device_list(&num);
    BOOST_REQUIRE(num == 2);
    BOOST_TEST(list.get()[2] == nullptr);

    ibv_device *mlx4 = find_device(list, "mlx4_0");
    BOOST_REQUIRE(mlx4);
    BOOST_TEST(std::string(mlx4->name) == "mlx4_0");
    BOOST_TEST(std::string(mlx4->dev_name).rfind("uverbs", 0) == 0);
    BOOST_TEST(std::string(mlx4->dev_path) ==
               "/sys/class/infiniband_verbs/" + std::string(mlx4->dev_name));
    BOOST_TEST(std::string(mlx4->ibdev_path) == "/sys/class/infiniband/mlx4_0");
    BOOST_TEST(mlx4->node_type == IBV_NODE_CA);
    BOOST_TEST(mlx4->transport_type == IBV_TRANSPORT_IB);
    BOOST_TEST(ibv_get_device_guid(mlx4) == htobe64(0x0002c90300abcd00ULL));
    BOOST_TEST(std::string(list.get()[0]->dev_name) != list.get()[1]->dev_name);
}

BOOST_AUTO_TEST_CASE(default_guids_and_lids_are_unique)
{
    ok("add a");
    ok("add b");
    DeviceList list = device_list();
    BOOST_TEST(ibv_get_device_guid(find_device(list, "a")) !=
               ibv_get_device_guid(find_device(list, "b")));
    ContextPtr a = open("a"), b = open("b");
    ibv_port_attr pa, pb;
    BOOST_REQUIRE(ibv_query_port(a.get(), 1, &pa) == 0);
    BOOST_REQUIRE(ibv_query_port(b.get(), 1, &pb) == 0);
    BOOST_TEST(pa.lid != 0);
    BOOST_TEST(pa.lid != pb.lid);
}

BOOST_AUTO_TEST_CASE(open_gives_a_plain_context_with_a_blocking_async_fd)
{
    ok("add mlx5_0");
    DeviceList list = device_list();
    ibv_device *dev = find_device(list, "mlx5_0");
    ibv_context *ctx = ibv_open_device(dev);
    BOOST_REQUIRE(ctx);
    BOOST_TEST(ctx->device == dev);
    BOOST_TEST(ctx->abi_compat == nullptr);  // not extended: inline wrappers use the plain symbols
    BOOST_TEST(ctx->num_comp_vectors == 1);
    int fd = ctx->async_fd;
    BOOST_TEST((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
    BOOST_TEST((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    BOOST_TEST(stats("mlx5_0")["opens"] == 1u);
    BOOST_TEST(stats("mlx5_0")["open_contexts"] == 1u);

    BOOST_TEST(ibv_close_device(ctx) == 0);
    BOOST_TEST(fcntl(fd, F_GETFD) == -1);  // the fd went away with the context
    BOOST_TEST(errno == EBADF);
    BOOST_TEST(stats("mlx5_0")["closes"] == 1u);
    BOOST_TEST(stats("mlx5_0")["open_contexts"] == 0u);
}

BOOST_AUTO_TEST_CASE(query_device_reports_the_device)
{
    ok("add mlx4_0 style=mlx4 ports=2 node_guid=0x1234");
    ContextPtr ctx = open("mlx4_0");
    ibv_device_attr attr;
    std::memset(&attr, 0xab, sizeof attr);
    BOOST_REQUIRE(ibv_query_device(ctx.get(), &attr) == 0);
    BOOST_TEST(std::string(attr.fw_ver) == "vsim");
    BOOST_TEST(attr.node_guid == htobe64(0x1234));
    BOOST_TEST(attr.vendor_id == 0x02c9u);
    BOOST_TEST(attr.phys_port_cnt == 2);
    BOOST_TEST(stats("mlx4_0")["queries"] == 1u);
}

BOOST_AUTO_TEST_CASE(query_port_through_the_inline_wrapper)
{
    ok("add mlx5_0 ports=2 lid=7");
    ok("port mlx5_0 2 state=down sm_lid=1");
    ContextPtr ctx = open("mlx5_0");
    ibv_port_attr attr;
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.state == IBV_PORT_ACTIVE);
    BOOST_TEST(attr.phys_state == 5);
    BOOST_TEST(attr.lid == 7);
    BOOST_TEST(attr.sm_lid == 7);  // the SM runs here: its LID is our own
    BOOST_TEST(attr.link_layer == IBV_LINK_LAYER_INFINIBAND);
    BOOST_TEST(attr.active_mtu == IBV_MTU_4096);
    BOOST_TEST(attr.gid_tbl_len > 0);
    BOOST_TEST(attr.pkey_tbl_len > 0);

    BOOST_REQUIRE(ibv_query_port(ctx.get(), 2, &attr) == 0);
    BOOST_TEST(attr.state == IBV_PORT_DOWN);
    BOOST_TEST(attr.phys_state == 2);
    BOOST_TEST(attr.lid == 8);
    BOOST_TEST(attr.sm_lid == 1);

    // ibv_query_port(3) returns the errno value, not -1.
    BOOST_TEST(ibv_query_port(ctx.get(), 0, &attr) == EINVAL);
    BOOST_TEST(ibv_query_port(ctx.get(), 3, &attr) == EINVAL);
}

BOOST_AUTO_TEST_CASE(rxe_ports_are_ethernet)
{
    ok("add rxe0 style=rxe");
    ContextPtr ctx = open("rxe0");
    ibv_port_attr attr;
    BOOST_REQUIRE(ibv_query_port(ctx.get(), 1, &attr) == 0);
    BOOST_TEST(attr.link_layer == IBV_LINK_LAYER_ETHERNET);
    BOOST_TEST(attr.lid == 0);
    BOOST_TEST(attr.state == IBV_PORT_ACTIVE);
}

BOOST_AUTO_TEST_CASE(gid0_is_link_local_prefix_plus_port_guid)
{
    ok("add mlx5_0 ports=2 node_guid=0x0002c90300001000");
    ContextPtr ctx = open("mlx5_0");
    ibv_gid gid;
    BOOST_REQUIRE(ibv_query_gid(ctx.get(), 2, 0, &gid) == 0);
    BOOST_TEST(gid.global.subnet_prefix == htobe64(0xfe80000000000000ULL));
    BOOST_TEST(gid.global.interface_id == htobe64(0x0002c90300001002ULL));  // node guid + port
    BOOST_TEST(gid.raw[0] == 0xfe);
    BOOST_TEST(gid.raw[1] == 0x80);

    // ibv_query_gid(3) returns -1 and sets errno.
    errno = 0;
    BOOST_TEST(ibv_query_gid(ctx.get(), 3, 0, &gid) == -1);
    BOOST_TEST(errno == EINVAL);
    errno = 0;
    BOOST_TEST(ibv_query_gid(ctx.get(), 1, 100000, &gid) == -1);
    BOOST_TEST(errno == EINVAL);

    __be16 pkey = 0;
    BOOST_REQUIRE(ibv_query_pkey(ctx.get(), 1, 0, &pkey) == 0);
    BOOST_TEST(pkey == htobe16(0xffff));
    BOOST_TEST(ibv_query_pkey(ctx.get(), 9, 0, &pkey) == -1);
}

BOOST_AUTO_TEST_CASE(strings_match_the_real_library)
{
    BOOST_TEST(std::string(ibv_event_type_str(IBV_EVENT_PORT_ACTIVE)) == "port active");
    BOOST_TEST(std::string(ibv_event_type_str(IBV_EVENT_PORT_ERR)) == "port error");
    BOOST_TEST(std::string(ibv_event_type_str(IBV_EVENT_DEVICE_FATAL)) ==
               "local catastrophic error");
    BOOST_TEST(std::string(ibv_event_type_str(static_cast<ibv_event_type>(99))) == "unknown");
    BOOST_TEST(std::string(ibv_port_state_str(IBV_PORT_ACTIVE)) == "active");
    BOOST_TEST(std::string(ibv_port_state_str(IBV_PORT_DOWN)) == "down");
    BOOST_TEST(std::string(ibv_node_type_str(IBV_NODE_CA)) == "InfiniBand channel adapter");
}

// The API contract violations below would be silent memory errors with the
// real library; the simulator makes them abort so a plugin bug is obvious.
BOOST_AUTO_TEST_CASE(device_pointer_used_after_free_list_aborts)
{
    ok("add mlx5_0");
    Outcome child = in_child([] {
        ibv_device **list = ibv_get_device_list(nullptr);
        ibv_device *dev = list[0];
        ibv_free_device_list(list);
        ibv_open_device(dev);
    });
    BOOST_TEST(child.status == 128 + SIGABRT);
    BOOST_TEST(child.err.find("ibv_free_device_list") != std::string::npos, child.err);
}

BOOST_AUTO_TEST_CASE(double_close_aborts)
{
    ok("add mlx5_0");
    Outcome child = in_child([] {
        ibv_device **list = ibv_get_device_list(nullptr);
        ibv_context *ctx = ibv_open_device(list[0]);
        ibv_free_device_list(list);
        ibv_close_device(ctx);
        ibv_close_device(ctx);
    });
    BOOST_TEST(child.status == 128 + SIGABRT);
    BOOST_TEST(child.err.find("not an open context") != std::string::npos, child.err);
}

BOOST_AUTO_TEST_SUITE_END()
