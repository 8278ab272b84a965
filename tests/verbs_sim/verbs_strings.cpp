// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibv_*_str(): the same texts the real library prints, because plugin log
// lines (and tests grepping them) should not change under the simulator.
#include <infiniband/verbs.h>

#include <iterator>

namespace {

template <std::size_t N>
const char *pick(const char *const (&table)[N], int index)
{
    if (index < 0 || static_cast<std::size_t>(index) >= N || !table[index])
        return "unknown";
    return table[index];
}

}  // namespace

extern "C" {

const char *ibv_event_type_str(enum ibv_event_type event)
{
    static const char *const names[] = {
        "CQ error",                                 // IBV_EVENT_CQ_ERR
        "local work queue catastrophic error",      // IBV_EVENT_QP_FATAL
        "invalid request local work queue error",   // IBV_EVENT_QP_REQ_ERR
        "local access violation work queue error",  // IBV_EVENT_QP_ACCESS_ERR
        "communication established",                // IBV_EVENT_COMM_EST
        "send queue drained",                       // IBV_EVENT_SQ_DRAINED
        "path migrated",                            // IBV_EVENT_PATH_MIG
        "path migration request error",             // IBV_EVENT_PATH_MIG_ERR
        "local catastrophic error",                 // IBV_EVENT_DEVICE_FATAL
        "port active",                              // IBV_EVENT_PORT_ACTIVE
        "port error",                               // IBV_EVENT_PORT_ERR
        "LID change",                               // IBV_EVENT_LID_CHANGE
        "P_Key change",                             // IBV_EVENT_PKEY_CHANGE
        "SM change",                                // IBV_EVENT_SM_CHANGE
        "SRQ catastrophic error",                   // IBV_EVENT_SRQ_ERR
        "SRQ limit reached",                        // IBV_EVENT_SRQ_LIMIT_REACHED
        "last WQE reached",                         // IBV_EVENT_QP_LAST_WQE_REACHED
        "client reregistration",                    // IBV_EVENT_CLIENT_REREGISTER
        "GID table change",                         // IBV_EVENT_GID_CHANGE
        "WQ fatal",                                 // IBV_EVENT_WQ_FATAL
    };
    return pick(names, static_cast<int>(event));
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
    static const char *const names[] = {
        "no state change (NOP)",  // IBV_PORT_NOP
        "down",                   // IBV_PORT_DOWN
        "init",                   // IBV_PORT_INIT
        "armed",                  // IBV_PORT_ARMED
        "active",                 // IBV_PORT_ACTIVE
        "active defer",           // IBV_PORT_ACTIVE_DEFER
    };
    return pick(names, static_cast<int>(port_state));
}

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
    static const char *const names[] = {
        "unknown",                     // 0 (IBV_NODE_UNKNOWN is -1)
        "InfiniBand channel adapter",  // IBV_NODE_CA
        "InfiniBand switch",           // IBV_NODE_SWITCH
        "InfiniBand router",           // IBV_NODE_ROUTER
        "iWARP NIC",                   // IBV_NODE_RNIC
        "usNIC",                       // IBV_NODE_USNIC
        "usNIC UDP",                   // IBV_NODE_USNIC_UDP
        "unspecified",                 // IBV_NODE_UNSPECIFIED
    };
    return pick(names, static_cast<int>(node_type));
}

}  // extern "C"
