// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibv_query_device / _port / _gid / _pkey.  Return conventions differ per
// call and are kept exactly: query_device and query_port return the errno
// value, query_gid and query_pkey return -1 and set errno (see their man
// pages).  errno is set in every failure case, which does no harm.
#include "registry.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <endian.h>

namespace vsim {

namespace {

constexpr int kGidTableLen = 8;
constexpr int kPkeyTableLen = 8;
constexpr uint64_t kLinkLocalPrefix = 0xfe80000000000000ULL;
constexpr uint16_t kDefaultPkey = 0xffff;

int fail_with_value(int err)
{
    errno = err;
    return err;
}

int fail_with_minus1(int err)
{
    errno = err;
    return -1;
}

bool valid_port(const Device &dev, uint8_t port_num)
{
    return port_num >= 1 && port_num <= dev.ports.size();
}

uint32_t vendor_part_id(Style style)
{
    switch (style) {
    case Style::mlx5:
        return 4123;  // ConnectX-6
    case Style::mlx4:
        return 4099;  // ConnectX-3
    case Style::rxe:
        return 0;
    }
    return 0;
}

}  // namespace

// Every query counts, including the failing ones: tests use the counter to
// see that the plugin re-reads the port after an event.
Context &Registry::query_context(ibv_context *context, const char *caller)
{
    Context &ctx = context_of(context, caller);
    ctx.dev->stats.queries++;
    return ctx;
}

int Registry::query_device(ibv_context *context, ibv_device_attr *attr)
{
    std::lock_guard<std::mutex> lock(mu_);
    Context &ctx = query_context(context, "ibv_query_device");
    int err;
    if (take_fault(Call::query_device, err))
        return fail_with_value(err);
    if (ctx.dead)
        return fail_with_value(EIO);

    const Device &dev = *ctx.dev;
    ibv_device_attr a;
    std::memset(&a, 0, sizeof a);
    (void)std::snprintf(a.fw_ver, sizeof a.fw_ver, "vsim");
    a.node_guid = htobe64(dev.node_guid);
    a.sys_image_guid = htobe64(dev.node_guid);
    a.max_mr_size = ~0ULL;
    a.page_size_cap = 0xfffff000;
    a.vendor_id = 0x02c9;
    a.vendor_part_id = vendor_part_id(dev.style);
    a.max_qp = 1 << 16;
    a.max_qp_wr = 1 << 15;
    a.max_sge = 30;
    a.max_cq = 1 << 16;
    a.max_cqe = 1 << 22;
    a.max_mr = 1 << 16;
    a.max_pd = 1 << 16;
    a.max_ah = 1 << 16;
    a.max_pkeys = kPkeyTableLen;
    a.local_ca_ack_delay = 16;
    a.phys_port_cnt = static_cast<uint8_t>(dev.ports.size());
    *attr = a;
    return 0;
}

int Registry::query_port(ibv_context *context, uint8_t port_num, ibv_port_attr *attr)
{
    std::lock_guard<std::mutex> lock(mu_);
    Context &ctx = query_context(context, "ibv_query_port");
    int err;
    if (take_fault(Call::query_port, err))
        return fail_with_value(err);
    if (ctx.dead)
        return fail_with_value(EIO);
    if (!valid_port(*ctx.dev, port_num))
        return fail_with_value(EINVAL);

    const Port &p = ctx.dev->ports[port_num - 1u];
    const bool eth = p.link_layer == IBV_LINK_LAYER_ETHERNET;
    ibv_port_attr a;
    std::memset(&a, 0, sizeof a);
    a.state = p.state;
    a.max_mtu = IBV_MTU_4096;
    a.active_mtu = eth ? IBV_MTU_1024 : IBV_MTU_4096;
    a.gid_tbl_len = kGidTableLen;
    a.port_cap_flags = eth ? (IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS)
                           : (IBV_PORT_CM_SUP | IBV_PORT_TRAP_SUP | IBV_PORT_CLIENT_REG_SUP);
    a.max_msg_sz = 1u << 30;
    a.pkey_tbl_len = kPkeyTableLen;
    a.lid = p.lid;
    a.sm_lid = p.sm_lid;
    a.max_vl_num = eth ? 1 : 4;
    a.subnet_timeout = 18;
    a.active_width = 2;   // 4x
    a.active_speed = 32;  // EDR
    a.phys_state = p.phys_state;
    a.link_layer = p.link_layer;
    // The exported symbol gets a struct _compat_ibv_port_attr *, but the only
    // caller is verbs.h's inline ibv_query_port(), which passes a full,
    // zeroed struct ibv_port_attr because our contexts are not extended.
    *attr = a;
    return 0;
}

int Registry::query_gid(ibv_context *context, uint8_t port_num, int index, ibv_gid *gid)
{
    std::lock_guard<std::mutex> lock(mu_);
    Context &ctx = query_context(context, "ibv_query_gid");
    int err;
    if (take_fault(Call::query_gid, err))
        return fail_with_minus1(err);
    if (ctx.dead)
        return fail_with_minus1(EIO);
    if (!valid_port(*ctx.dev, port_num) || index < 0 || index >= kGidTableLen)
        return fail_with_minus1(EINVAL);

    // GID 0 is the default GID: link-local prefix + port GUID, both in
    // network byte order.  The other entries are unused (zero).
    std::memset(gid, 0, sizeof *gid);
    if (index == 0) {
        gid->global.subnet_prefix = htobe64(kLinkLocalPrefix);
        gid->global.interface_id = htobe64(ctx.dev->ports[port_num - 1u].guid);
    }
    return 0;
}

int Registry::query_pkey(ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
    std::lock_guard<std::mutex> lock(mu_);
    Context &ctx = query_context(context, "ibv_query_pkey");
    int err;
    if (take_fault(Call::query_pkey, err))
        return fail_with_minus1(err);
    if (ctx.dead)
        return fail_with_minus1(EIO);
    if (!valid_port(*ctx.dev, port_num) || index < 0 || index >= kPkeyTableLen)
        return fail_with_minus1(EINVAL);
    *pkey = htobe16(index == 0 ? kDefaultPkey : 0);
    return 0;
}

}  // namespace vsim
