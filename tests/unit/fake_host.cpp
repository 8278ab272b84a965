// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "fake_host.hpp"

#include <cstdio>
#include <new>
#include <string>

#include <dlfcn.h>
#include <endian.h>

#include <boost/test/unit_test.hpp>

#include "vsim.h"

namespace pwtest {

FakeHost::FakeHost()
    : cb_{this,    log_cb,  sm_state_cb, guid_cb,   sweep_cb,
          smps_cb, exit_cb, deadline_cb, mad_fd_cb, mute_cb}
{
}

void FakeHost::log_cb(void *ctx, pw_log_level level, const char *line)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    // Stored at its severity; the syslog copy is counted apart (count_sys).
    bool sys = level == PW_LOG_SYS_ERROR || level == PW_LOG_SYS_INFO;
    if (level == PW_LOG_SYS_ERROR)
        level = PW_LOG_ERROR;
    else if (level == PW_LOG_SYS_INFO)
        level = PW_LOG_INFO;
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->lines_.emplace_back(level, line);
    if (sys)
        self->sys_lines_.emplace_back(line);
    self->changed_.notify_all();
}

pw_sm_state FakeHost::sm_state_cb(void *ctx)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    if (self->sm_state_throws.load() > 0) {
        --self->sm_state_throws;
        throw std::bad_alloc();
    }
    return self->sm_state.load();
}

uint64_t FakeHost::guid_cb(void *ctx)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    return self->guid_net.load();
}

int FakeHost::sweep_cb(void *ctx, int wake)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    if (self->exiting)
        return -1;
    if (wake && !self->mad_path_dead)
        ++self->smps;
    if (wake && self->on_wake)
        self->on_wake();
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (wake)
        self->sweep_times_.push_back(portwatch::Clock::now());
    else
        ++self->marks_;
    self->changed_.notify_all();
    return 0;
}

uint32_t FakeHost::smps_cb(void *ctx)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    return self->smps.load();
}

int FakeHost::exit_cb(void *ctx)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    if (self->exiting.exchange(true))
        return -1;
    ++self->exit_requests;
    return 0;
}

int FakeHost::deadline_cb(void *ctx, uint32_t after_ms)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    if (self->exiting)  // armed after the exit was asked for: too late to say so first
        ++self->deadlines_late;
    self->deadline_ms = after_ms;
    ++self->deadlines;
    return 0;
}

int FakeHost::mad_fd_cb(void *ctx)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    return self->mad_fd.load();
}

int FakeHost::mute_cb(void *ctx)
{
    auto *self = static_cast<FakeHost *>(ctx);
    if (self->closed)
        ++self->calls_after_close;
    ++self->mutes;
    return self->errors_muted.exchange(true) ? -1 : 0;
}

void FakeHost::set_guid(uint64_t host_order)
{
    guid_net = htobe64(host_order);
}

int FakeHost::sweeps() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(sweep_times_.size());
}

int FakeHost::marks() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return marks_;
}

std::vector<portwatch::TimePoint> FakeHost::sweep_times() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return sweep_times_;
}

std::vector<std::string> FakeHost::lines() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto &l : lines_)
        out.push_back(l.second);
    return out;
}

int FakeHost::count(const std::string &needle) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (const auto &l : lines_)
        n += l.second.find(needle) != std::string::npos;
    return n;
}

int FakeHost::summarised(const std::string &kind) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (const auto &l : lines_) {
        if (l.second.rfind("in the last ", 0) != 0)
            continue;
        size_t at = l.second.find(" " + kind + ",");
        size_t start = l.second.rfind(' ', at - 1);
        if (at != std::string::npos && start != std::string::npos)
            n += std::stoi(l.second.substr(start + 1, at - start - 1));
    }
    return n;
}

int FakeHost::sweeps_told() const
{
    int n = count("[action=sweep]");
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string tag = "; sweeps requested ";
    for (const auto &l : lines_) {
        size_t at = l.second.find(tag);
        if (l.second.rfind("in the last ", 0) == 0 && at != std::string::npos)
            n += std::stoi(l.second.substr(at + tag.size()));
    }
    return n;
}

int FakeHost::count_sys(const std::string &needle) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (const auto &l : sys_lines_)
        n += l.find(needle) != std::string::npos;
    return n;
}

int FakeHost::count_level(pw_log_level level) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (const auto &l : lines_)
        n += l.first == level;
    return n;
}

int FakeHost::count_logged(const std::string &needle, pw_log_level level) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (const auto &l : lines_)
        n += l.first <= level && l.second.find(needle) != std::string::npos;
    return n;
}

bool FakeHost::wait_for(const std::string &needle, int n, std::chrono::milliseconds timeout) const
{
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
        int found = 0;
        for (const auto &l : lines_)
            found += l.second.find(needle) != std::string::npos;
        return found >= n;
    });
}

bool FakeHost::wait_sweeps(int n, std::chrono::milliseconds timeout) const
{
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout,
                             [&] { return static_cast<int>(sweep_times_.size()) >= n; });
}

std::string FakeHost::dump() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    for (const auto &l : lines_)
        out += "  log[" + std::to_string(l.first) + "] " + l.second + "\n";
    return out;
}

std::string vsim(const std::string &command)
{
    auto fn = reinterpret_cast<vsim_command_fn>(dlsym(RTLD_DEFAULT, "vsim_command"));
    BOOST_REQUIRE_MESSAGE(fn, "the verbs simulator is not preloaded (run through tests/with-vsim)");
    char reply[1024];
    int rc = fn(command.c_str(), reply, sizeof(reply));
    BOOST_REQUIRE_MESSAGE(rc == 0, "vsim '" << command << "' -> " << reply);
    return reply;
}

void add_device(const std::string &name, uint64_t node_guid, const std::string &extra)
{
    char guid[24];
    std::snprintf(guid, sizeof(guid), "0x%016llx", static_cast<unsigned long long>(node_guid));
    vsim("add " + name + " node_guid=" + guid + (extra.empty() ? "" : " " + extra));
}

std::string stat_of(const std::string &stats, const std::string &key)
{
    size_t at = stats.find(" " + key + "=");
    if (at == std::string::npos)
        return "?";
    at += key.size() + 2;
    return stats.substr(at, stats.find(' ', at) - at);
}

bool try_vsim(const std::string &command, std::string *reply)
{
    auto fn = reinterpret_cast<vsim_command_fn>(dlsym(RTLD_DEFAULT, "vsim_command"));
    char buf[1024] = "no verbs simulator";
    int rc = fn ? fn(command.c_str(), buf, sizeof(buf)) : -1;
    if (reply)
        *reply = buf;
    return rc == 0;
}

}  // namespace pwtest
