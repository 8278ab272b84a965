// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Parser for the control language (see README.md for the grammar).  Parsing
// and validation happen here, before the registry is touched, so a command
// with one bad argument changes nothing.  The name tables are function-local
// statics: VSIM_CONFIG runs from the library constructor, possibly before
// this file's namespace-scope objects would have been initialized.
#include "commands.hpp"

#include "registry.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace vsim {

namespace {

constexpr int kMaxPorts = 32;
constexpr int kDefaultWaitMs = 5000;

// A command split into words: plain words in order, key=value pairs by key.
struct Args {
    std::string command;
    std::vector<std::string> words;
    std::map<std::string, std::string> options;
};

// Parse failures travel as exceptions inside this file only; run_command()
// turns them into an error reply.
struct BadCommand {
    std::string message;
};

[[noreturn]] void bad(const std::string &message)
{
    throw BadCommand{message};
}

std::string strip_comment(std::string_view line)
{
    return std::string(line.substr(0, line.find('#')));
}

Args split(std::string_view line)
{
    Args args;
    std::istringstream in(strip_comment(line));
    std::string word;
    in >> args.command;
    while (in >> word) {
        auto eq = word.find('=');
        if (eq == std::string::npos) {
            args.words.push_back(word);
            continue;
        }
        std::string key = word.substr(0, eq);
        if (key.empty())
            bad(args.command + ": '" + word + "' has no key before '='");
        if (!args.options.emplace(key, word.substr(eq + 1)).second)
            bad(args.command + ": " + key + "= given twice");
    }
    return args;
}

// Checks the word count and that only known keys and flag words appear.
// Returns the flag words present.
std::set<std::string> check_shape(const Args &a, std::size_t min_words, std::size_t max_words,
                                  const std::set<std::string> &keys,
                                  const std::set<std::string> &flags = {})
{
    std::set<std::string> seen_flags;
    std::size_t positional = 0;
    for (const auto &w : a.words) {
        if (positional >= min_words && flags.count(w)) {
            seen_flags.insert(w);
            continue;
        }
        if (++positional > max_words)
            bad(a.command + ": unexpected word '" + w + "'");
    }
    if (positional < min_words)
        bad(a.command + ": missing argument (see README.md for the syntax)");
    for (const auto &kv : a.options)
        if (!keys.count(kv.first))
            bad(a.command + ": unknown key '" + kv.first + "'");
    return seen_flags;
}

uint64_t parse_number(const std::string &cmd, const std::string &what, const std::string &text,
                      uint64_t min, uint64_t max)
{
    if (text.empty() || text[0] == '-' || text[0] == '+')
        bad(cmd + ": " + what + " '" + text + "' is not a number");
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 0);
    if (errno || *end != '\0')
        bad(cmd + ": " + what + " '" + text + "' is not a number");
    if (v < min || v > max)
        bad(cmd + ": " + what + " " + text + " is out of range " + std::to_string(min) + ".." +
            std::to_string(max));
    return v;
}

template <typename T>
T lookup(const std::string &cmd, const std::string &what, const std::string &text,
         const std::map<std::string, T> &table)
{
    auto it = table.find(text);
    if (it != table.end())
        return it->second;
    std::string choices;
    for (const auto &kv : table)
        choices += (choices.empty() ? "" : "|") + kv.first;
    bad(cmd + ": bad " + what + " '" + text + "' (want " + choices + ")");
}

// The lookup tables are built once and never destroyed (see
// no_destructor.hpp): the control socket thread may still be running a
// command while exit() runs static destructors in the host.
const std::map<std::string, ibv_port_state> &states()
{
    static const auto *table =
        new std::map<std::string, ibv_port_state>{{"down", IBV_PORT_DOWN},
                                                  {"init", IBV_PORT_INIT},
                                                  {"armed", IBV_PORT_ARMED},
                                                  {"active", IBV_PORT_ACTIVE}};
    return *table;
}

const std::map<std::string, Style> &styles()
{
    static const auto *table = new std::map<std::string, Style>{
        {"mlx5", Style::mlx5}, {"mlx4", Style::mlx4}, {"rxe", Style::rxe}};
    return *table;
}

const std::map<std::string, uint8_t> &phys_names()
{
    static const auto *table = new std::map<std::string, uint8_t>{
        {"polling", kPhysPolling}, {"disabled", kPhysDisabled}, {"linkup", kPhysLinkUp}};
    return *table;
}

const std::map<std::string, uint8_t> &links()
{
    static const auto *table = new std::map<std::string, uint8_t>{{"ib", IBV_LINK_LAYER_INFINIBAND},
                                                                  {"eth", IBV_LINK_LAYER_ETHERNET}};
    return *table;
}

const std::map<std::string, ibv_event_type> &event_types()
{
    static const auto *table = new std::map<std::string, ibv_event_type>{
        {"port_err", IBV_EVENT_PORT_ERR},
        {"port_active", IBV_EVENT_PORT_ACTIVE},
        {"lid_change", IBV_EVENT_LID_CHANGE},
        {"pkey_change", IBV_EVENT_PKEY_CHANGE},
        {"gid_change", IBV_EVENT_GID_CHANGE},
        {"sm_change", IBV_EVENT_SM_CHANGE},
        {"client_reregister", IBV_EVENT_CLIENT_REREGISTER},
        {"device_fatal", IBV_EVENT_DEVICE_FATAL}};
    return *table;
}

const std::map<std::string, Call> &calls()
{
    static const auto *table =
        new std::map<std::string, Call>{{"get_device_list", Call::get_device_list},
                                        {"open_device", Call::open_device},
                                        {"query_device", Call::query_device},
                                        {"query_port", Call::query_port},
                                        {"query_gid", Call::query_gid},
                                        {"query_pkey", Call::query_pkey},
                                        {"get_async_event", Call::get_async_event}};
    return *table;
}

const std::map<std::string, int> &errno_names()
{
    static const auto *table = new std::map<std::string, int>{
        {"EIO", EIO},       {"EINTR", EINTR},   {"EAGAIN", EAGAIN}, {"ENODEV", ENODEV},
        {"ENOMEM", ENOMEM}, {"EINVAL", EINVAL}, {"EPERM", EPERM},   {"EBUSY", EBUSY}};
    return *table;
}

// Device names end up in struct ibv_device.name and in sysfs-like paths.
std::string device_name(const Args &a)
{
    const std::string &name = a.words.at(0);
    if (name.size() >= IBV_SYSFS_NAME_MAX)
        bad(a.command + ": device name '" + name + "' is too long");
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
            bad(a.command + ": device name '" + name + "' may only hold [A-Za-z0-9_.-]");
    return name;
}

std::optional<std::string> option(const Args &a, const std::string &key)
{
    auto it = a.options.find(key);
    if (it == a.options.end())
        return std::nullopt;
    return it->second;
}

Reply cmd_add(const Args &a)
{
    check_shape(a, 1, 1, {"node_guid", "ports", "style", "state", "lid", "uevent"});
    DeviceSpec spec;
    spec.name = device_name(a);
    if (auto v = option(a, "node_guid"))
        spec.node_guid = parse_number(a.command, "node_guid", *v, 1, UINT64_MAX);
    if (auto v = option(a, "ports"))
        spec.ports = static_cast<int>(parse_number(a.command, "ports", *v, 1, kMaxPorts));
    if (auto v = option(a, "style"))
        spec.style = lookup(a.command, "style", *v, styles());
    if (auto v = option(a, "state"))
        spec.state = lookup(a.command, "state", *v, states());
    if (auto v = option(a, "lid"))
        spec.lid = static_cast<uint16_t>(parse_number(a.command, "lid", *v, 0, 0xffff));
    if (auto v = option(a, "uevent")) {
        if (*v != "yes" && *v != "no")
            bad(a.command + ": uevent must be yes or no, not '" + *v + "'");
        spec.uevent = *v == "yes";
    }
    return Registry::instance().add(spec);
}

Reply cmd_port(const Args &a)
{
    auto flags =
        check_shape(a, 2, 2, {"state", "phys", "lid", "sm_lid", "guid", "link"}, {"quiet"});
    std::string name = device_name(a);
    int port = static_cast<int>(parse_number(a.command, "port", a.words.at(1), 1, kMaxPorts));
    PortChange change;
    change.quiet = flags.count("quiet") > 0;
    if (auto v = option(a, "state"))
        change.state = lookup(a.command, "state", *v, states());
    if (auto v = option(a, "phys")) {
        auto named = phys_names().find(*v);
        change.phys_state = named != phys_names().end()
                                ? named->second
                                : static_cast<uint8_t>(parse_number(a.command, "phys", *v, 1, 7));
    }
    if (auto v = option(a, "lid"))
        change.lid = static_cast<uint16_t>(parse_number(a.command, "lid", *v, 0, 0xffff));
    if (auto v = option(a, "sm_lid"))
        change.sm_lid = static_cast<uint16_t>(parse_number(a.command, "sm_lid", *v, 0, 0xffff));
    if (auto v = option(a, "guid"))
        change.guid = parse_number(a.command, "guid", *v, 0, UINT64_MAX);
    if (auto v = option(a, "link"))
        change.link_layer = lookup(a.command, "link", *v, links());
    return Registry::instance().change_port(name, port, change);
}

Reply cmd_event(const Args &a)
{
    check_shape(a, 3, 3, {});
    std::string name = device_name(a);
    int port = static_cast<int>(parse_number(a.command, "port", a.words.at(1), 0, kMaxPorts));
    ibv_event_type type = lookup(a.command, "event type", a.words.at(2), event_types());
    return Registry::instance().inject(name, port, type);
}

Reply cmd_fatal(const Args &a)
{
    check_shape(a, 1, 1, {});
    return Registry::instance().fatal(device_name(a));
}

Reply cmd_remove(const Args &a)
{
    auto flags = check_shape(a, 1, 1, {}, {"abrupt"});
    return Registry::instance().remove(device_name(a), flags.count("abrupt") > 0);
}

Reply cmd_delay(const Args &a)
{
    check_shape(a, 1, 1, {"ms", "count"});
    Call call = lookup(a.command, "call", a.words.at(0), calls());
    auto ms = option(a, "ms");
    if (!ms)
        bad("delay: ms=N is required");
    unsigned count = 1;
    if (auto v = option(a, "count"))
        count = static_cast<unsigned>(parse_number(a.command, "count", *v, 0, 1000000));
    return Registry::instance().set_delay(
        call, static_cast<unsigned>(parse_number(a.command, "ms", *ms, 0, 60000)), count);
}

Reply cmd_fail(const Args &a)
{
    check_shape(a, 1, 1, {"errno", "count"});
    Call call = lookup(a.command, "call", a.words.at(0), calls());
    int err = EIO;
    if (auto v = option(a, "errno")) {
        auto named = errno_names().find(*v);
        if (*v == "unchanged") {
            // rdma-core's ibv_get_async_event() returns -1 on a short read
            // without setting errno: the caller sees whatever errno held.
            if (call != Call::get_async_event)
                return Reply::failure("fail: errno=unchanged applies to get_async_event only");
            err = 0;
        } else {
            err = named != errno_names().end()
                      ? named->second
                      : static_cast<int>(parse_number(a.command, "errno", *v, 1, 4095));
        }
    }
    unsigned count = 1;
    if (auto v = option(a, "count"))
        count = static_cast<unsigned>(parse_number(a.command, "count", *v, 0, 1000000));
    return Registry::instance().set_fault(call, err, count);
}

int timeout_ms(const Args &a)
{
    auto v = option(a, "timeout_ms");
    return v ? static_cast<int>(parse_number(a.command, "timeout_ms", *v, 0, 3600000))
             : kDefaultWaitMs;
}

Reply cmd_wait_open(const Args &a)
{
    check_shape(a, 1, 1, {"timeout_ms"});
    return Registry::instance().wait_open(device_name(a), timeout_ms(a));
}

Reply cmd_wait_closed(const Args &a)
{
    check_shape(a, 1, 1, {"timeout_ms"});
    return Registry::instance().wait_closed(device_name(a), timeout_ms(a));
}

Reply cmd_stats(const Args &a)
{
    check_shape(a, 0, 1, {});
    if (a.words.empty())
        return Registry::instance().stats(std::nullopt);
    return Registry::instance().stats(device_name(a));
}

Reply cmd_last_event(const Args &a)
{
    check_shape(a, 0, 0, {});
    return Registry::instance().last_event();
}

Reply cmd_reset(const Args &a)
{
    check_shape(a, 0, 0, {});
    return Registry::instance().reset();
}

const std::map<std::string, std::function<Reply(const Args &)>> &commands()
{
    static const auto *table = new std::map<std::string, std::function<Reply(const Args &)>>{
        {"add", cmd_add},
        {"port", cmd_port},
        {"event", cmd_event},
        {"fatal", cmd_fatal},
        {"remove", cmd_remove},
        {"fail", cmd_fail},
        {"delay", cmd_delay},
        {"wait-open", cmd_wait_open},
        {"wait-closed", cmd_wait_closed},
        {"stats", cmd_stats},
        {"last-event", cmd_last_event},
        {"reset", cmd_reset}};
    return *table;
}

}  // namespace

bool is_blank_command(std::string_view line)
{
    return strip_comment(line).find_first_not_of(" \t\r\n") == std::string::npos;
}

Reply run_command(std::string_view line)
{
    try {
        Args args = split(line);
        if (args.command.empty())
            return Reply::failure("empty command");
        auto it = commands().find(args.command);
        if (it == commands().end())
            return Reply::failure("unknown command '" + args.command + "'");
        return it->second(args);
    } catch (const BadCommand &e) {
        return Reply::failure(e.message);
    } catch (const std::exception &e) {
        return Reply::failure(std::string("internal error: ") + e.what());
    }
}

}  // namespace vsim
