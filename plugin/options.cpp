// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "options.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>

namespace portwatch {

namespace {

constexpr std::string_view kPrefix = "portwatch.";
constexpr size_t kMaxShown = 80;  // an error names the token, not a megabyte of it

// The token as it may appear in a log line: printable, at most kMaxShown
// characters of it once escaped (a byte like 0x13 takes four: \x13), so the
// whole line stays well inside the 512 bytes the host's logger keeps.
std::string shown(std::string_view token)
{
    std::string out;
    size_t used = 0;
    for (unsigned char c : token) {
        char piece[8];
        if (std::isprint(c))
            (void)std::snprintf(piece, sizeof(piece), "%c", c);
        else
            (void)std::snprintf(piece, sizeof(piece), "\\x%02x", c);
        if (out.size() + std::strlen(piece) > kMaxShown)
            break;
        out += piece;
        ++used;
    }
    if (used < token.size())
        out += "...";
    return out;
}

bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool starts_with_ci(std::string_view s, std::string_view prefix)
{
    if (s.size() < prefix.size())
        return false;
    for (size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i])
            return false;
    return true;
}

template <typename T>
bool parse_number(std::string_view text, int base, T &out)
{
    // Digits only: from_chars would take "-0" as a number, and a sign in a
    // config file is a typo, not a value.
    if (text.empty() || !std::isxdigit(static_cast<unsigned char>(text[0])))
        return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
    return ec == std::errc() && end == text.data() + text.size();
}

bool parse_millis(std::string_view value, long min, long max, Millis &out)
{
    long n = 0;
    if (!parse_number(value, 10, n) || n < min || n > max)
        return false;
    out = Millis(n);
    return true;
}

bool parse_guid(std::string_view value, uint64_t &out)
{
    if (value.size() < 3 || value.size() > 18 || value[0] != '0' ||
        (value[1] != 'x' && value[1] != 'X'))
        return false;
    return parse_number(value.substr(2), 16, out) && out != 0;
}

bool valid_device_name(std::string_view name)
{
    if (name.empty() || name.size() > 63)  // IBV_SYSFS_NAME_MAX is 64
        return false;
    for (unsigned char c : name)
        if (!std::isalnum(c) && c != '_' && c != '-' && c != '.')
            return false;
    return true;
}

bool parse_port(std::string_view value, PortSpec &out)
{
    if (value == "auto") {
        out = PortSpec{};
        return true;
    }
    if (value.substr(0, 2) == "0x" || value.substr(0, 2) == "0X") {
        PortSpec spec;
        spec.kind = PortSpec::Kind::Guid;
        if (!parse_guid(value, spec.guid))
            return false;
        out = spec;
        return true;
    }
    size_t colon = value.rfind(':');
    if (colon == std::string_view::npos)
        return false;
    PortSpec spec;
    spec.kind = PortSpec::Kind::DevicePort;
    spec.device = std::string(value.substr(0, colon));
    if (!valid_device_name(spec.device) || !parse_number(value.substr(colon + 1), 10, spec.port) ||
        spec.port < 1 || spec.port > 254)
        return false;
    out = spec;
    return true;
}

// An absolute path to a file, as node_exporter's textfile collector reads
// them: the directory must exist when the plugin starts (checked then).
// "%g" in the file name stands for OpenSM's port GUID, so that one opensm
// per port (Debian's service) writes one file each from one opensm.conf.
// No other '%' is taken: a placeholder added later cannot change what an
// accepted path means.
bool parse_metrics_file(std::string_view value, std::string &out)
{
    if (value == "off") {  // as describe() shows the default
        out.clear();
        return true;
    }
    if (value.size() < 2 || value.size() > 4095 || value[0] != '/' || value.back() == '/')
        return false;
    std::string_view name = value.substr(value.rfind('/') + 1);
    if (name == "." || name == "..")
        return false;
    for (unsigned char c : value)
        if (!std::isprint(c))
            return false;
    const size_t name_at = value.rfind('/') + 1;
    for (size_t i = value.find('%'); i != std::string_view::npos; i = value.find('%', i + 2))
        if (i < name_at || value.substr(i, 2) != "%g")
            return false;
    out = std::string(value);
    return true;
}

bool parse_yes_no(std::string_view value, bool &out)
{
    if (value == "yes") {
        out = true;
        return true;
    }
    if (value == "no") {
        out = false;
        return true;
    }
    return false;
}

bool parse_on_reset(std::string_view value, OnDeviceReset &out)
{
    if (value == "restart")
        out = OnDeviceReset::Restart;
    else if (value == "log")
        out = OnDeviceReset::Log;
    else
        return false;
    return true;
}

bool parse_states(std::string_view value, SmStateSet &out)
{
    SmStateSet set{false, false, false, false};
    std::set<std::string_view> seen;
    while (true) {
        size_t comma = value.find(',');
        std::string_view name = value.substr(0, comma);
        if (!seen.insert(name).second)
            return false;
        if (name == "master")
            set.master = true;
        else if (name == "discovering")
            set.discovering = true;
        else if (name == "standby")
            set.standby = true;
        else if (name == "not_active")
            set.not_active = true;
        else
            return false;
        if (comma == std::string_view::npos)
            break;
        value.remove_prefix(comma + 1);
    }
    out = set;
    return true;
}

// Applies one "portwatch.key=value" token; returns an error text or "".
std::string apply(std::string_view token, std::set<std::string> &seen, Options &opts)
{
    std::string_view body = token.substr(kPrefix.size());
    size_t eq = body.find('=');
    if (eq == std::string_view::npos)
        return "option '" + shown(token) + "' has no '=': expected portwatch.KEY=VALUE";
    std::string key(body.substr(0, eq));
    std::string_view value = body.substr(eq + 1);
    if (value.empty())
        return "option '" + shown(token) + "' has an empty value";

    bool ok = false;
    std::string expected;
    if (key == "port") {
        ok = parse_port(value, opts.port);
        expected = "auto, DEVICE:PORT (e.g. mlx5_0:1) or a port GUID (e.g. 0x0002c903000e0b72)";
    } else if (key == "holdoff_ms") {
        ok = parse_millis(value, 0, 60000, opts.holdoff);
        expected = "a whole number of milliseconds from 0 to 60000";
    } else if (key == "sweep_on_loss") {
        ok = parse_yes_no(value, opts.sweep_on_loss);
        expected = "yes or no";
    } else if (key == "act_in") {
        ok = parse_states(value, opts.act_in);
        expected = "a comma-separated list of master, discovering, standby, not_active";
    } else if (key == "retry_max_ms") {
        ok = parse_millis(value, 100, 3600000, opts.retry_max);
        expected = "a whole number of milliseconds from 100 to 3600000";
    } else if (key == "verify_ms") {
        ok = parse_millis(value, 0, 60000, opts.verify);
        expected = "a whole number of milliseconds from 0 to 60000";
    } else if (key == "verify_tries") {
        ok = parse_number(value, 10, opts.verify_tries) && opts.verify_tries <= 20;
        expected = "a whole number from 0 to 20";
    } else if (key == "metrics_file") {
        ok = parse_metrics_file(value, opts.metrics_file);
        expected = "off or an absolute path to a file, e.g. "
                   "/var/lib/prometheus/node-exporter/portwatch-%g.prom (%g in the file name: "
                   "OpenSM's port GUID)";
    } else if (key == "on_device_reset") {
        ok = parse_on_reset(value, opts.on_device_reset);
        expected = "restart or log";
    } else if (key == "reset_check_ms") {
        ok = parse_millis(value, 1000, 600000, opts.reset_check);
        expected = "a whole number of milliseconds from 1000 to 600000";
    } else {
        return "unknown option '" + shown(token) +
               "' (known: portwatch. followed by port, holdoff_ms, sweep_on_loss, act_in, "
               "retry_max_ms, verify_ms, verify_tries, metrics_file, on_device_reset, "
               "reset_check_ms)";
    }
    if (!ok)
        return "bad value in '" + shown(token) + "': expected " + expected;
    if (!seen.insert(key).second)
        return "option portwatch." + key + " given twice ('" + shown(token) + "')";
    return "";
}

}  // namespace

ParsedOptions parse_options(const char *text)
{
    Options opts;
    std::set<std::string> seen;
    std::string_view rest = text ? std::string_view(text) : std::string_view();

    while (!rest.empty()) {
        size_t start = 0;
        while (start < rest.size() && is_space(rest[start]))
            ++start;
        size_t end = start;
        while (end < rest.size() && !is_space(rest[end]))
            ++end;
        std::string_view token = rest.substr(start, end - start);
        rest.remove_prefix(end);
        if (token.empty())
            continue;
        if (token.substr(0, kPrefix.size()) == kPrefix) {
            std::string error = apply(token, seen, opts);
            if (!error.empty())
                return {std::nullopt, error};
        } else if (starts_with_ci(token, "portwatch")) {
            // Almost ours: a typo the admin wants to hear about, not silence.
            return {std::nullopt,
                    "option '" + shown(token) + "' is not of the form portwatch.KEY=VALUE"};
        }
        // Anything else belongs to another plugin.
    }
    return {opts, ""};
}

std::string PortSpec::describe() const
{
    char buf[96];
    switch (kind) {
    case Kind::DevicePort:
        (void)std::snprintf(buf, sizeof(buf), "%s:%u", device.c_str(), port);
        return buf;
    case Kind::Guid:
        (void)std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(guid));
        return buf;
    case Kind::Auto:
        break;
    }
    return "auto";
}

bool SmStateSet::contains(pw_sm_state state) const
{
    switch (state) {
    case PW_SM_MASTER:
        return master;
    case PW_SM_DISCOVERING:
        return discovering;
    case PW_SM_STANDBY:
        return standby;
    case PW_SM_NOT_ACTIVE:
        return not_active;
    }
    return false;
}

std::string SmStateSet::describe() const
{
    std::string out;
    auto add = [&out](bool on, const char *name) {
        if (!on)
            return;
        if (!out.empty())
            out += ',';
        out += name;
    };
    add(master, "master");
    add(discovering, "discovering");
    add(standby, "standby");
    add(not_active, "not_active");
    return out;
}

std::string Options::describe() const
{
    return "port=" + port.describe() + " holdoff_ms=" + std::to_string(holdoff.count()) +
           " sweep_on_loss=" + (sweep_on_loss ? "yes" : "no") + " act_in=" + act_in.describe() +
           " retry_max_ms=" + std::to_string(retry_max.count()) +
           " verify_ms=" + std::to_string(verify.count()) +
           " verify_tries=" + std::to_string(verify_tries) +
           " metrics_file=" + (metrics_file.empty() ? "off" : metrics_file) +
           " on_device_reset=" + on_device_reset_name(on_device_reset) +
           " reset_check_ms=" + std::to_string(reset_check.count());
}

const char *on_device_reset_name(OnDeviceReset action)
{
    return action == OnDeviceReset::Restart ? "restart" : "log";
}

const char *sm_state_name(pw_sm_state state)
{
    switch (state) {
    case PW_SM_MASTER:
        return "MASTER";
    case PW_SM_DISCOVERING:
        return "DISCOVERING";
    case PW_SM_STANDBY:
        return "STANDBY";
    case PW_SM_NOT_ACTIVE:
        return "NOT ACTIVE";
    }
    return "UNKNOWN";
}

}  // namespace portwatch
