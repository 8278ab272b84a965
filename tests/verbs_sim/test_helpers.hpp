// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Helpers shared by the simulator self-test.  The test program calls the
// ordinary libibverbs API; tests/with-vsim preloads libvsim.so, so those calls
// reach the simulator, which the tests steer through vsim_command().
#pragma once

#include <infiniband/verbs.h>

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace vt {

// --- control ---------------------------------------------------------------
std::string command(const std::string &line);  // reply line; fails the test if not preloaded
void ok(const std::string &line);              // requires an "ok" reply
std::string error(const std::string &line);    // requires an "error" reply, returns it
std::map<std::string, unsigned long long> stats(const std::string &name = "");
// Without test assertions, for forked children: 0 ok, -1 error reply.
int raw_command(const std::string &line);

// Every test case starts from an empty simulator.
struct ResetFixture {
    ResetFixture();
};

// --- verbs objects ---------------------------------------------------------
struct FreeList {
    void operator()(ibv_device **list) const { ibv_free_device_list(list); }
};
using DeviceList = std::unique_ptr<ibv_device *, FreeList>;
DeviceList device_list(int *num = nullptr);
ibv_device *find_device(const DeviceList &list, const std::string &name);  // nullptr if absent
std::vector<std::string> device_names();

struct CloseContext {
    void operator()(ibv_context *ctx) const { ibv_close_device(ctx); }
};
using ContextPtr = std::unique_ptr<ibv_context, CloseContext>;
ContextPtr open(const std::string &name);  // requires success; async fd left blocking

// --- events ----------------------------------------------------------------
struct Ev {
    ibv_event_type type;
    int port;
    bool operator==(const Ev &o) const { return type == o.type && port == o.port; }
};
std::ostream &operator<<(std::ostream &os, const Ev &ev);
using Evs = std::vector<Ev>;

void set_nonblocking(int fd);
short poll_revents(int fd, int timeout_ms);  // 0 on timeout
// Sets the async fd non-blocking, then reads and acks events until a read
// fails.  The failure must be EAGAIN unless `last_errno` is given to receive it.
Evs drain(ibv_context *ctx, int *last_errno = nullptr);

// --- processes -------------------------------------------------------------
struct Outcome {
    int status = -1;  // exit status, or 128 + signal
    std::string out;
    std::string err;
};
// Runs argv with exactly `env` as environment; stdin from `stdin_fd` or /dev/null.
Outcome run(const std::vector<std::string> &argv, const std::vector<std::string> &env,
            int stdin_fd = -1);
// Runs `body` in a forked child (no core dump) and returns how it ended.
// `body` must not use test assertions: they would report from the child.
Outcome in_child(const std::function<void()> &body);

std::string libvsim_path();  // the preloaded library, as loaded
std::string vsimctl_path();  // next to this test program (or $VSIMCTL)

// A private directory, removed with its contents at scope exit.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }
    std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

void write_file(const std::string &path, const std::string &text);
bool wait_for_path(const std::string &path, int timeout_ms);

}  // namespace vt
