// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// In-process benchmarks of the portwatch core: the C seam (pw_core_create,
// pw_core_destroy) with a recording host, against the verbs simulator
// (preloaded: run through tests/with-vsim). Prints numbers; never judges them.
//
//   bench_inproc latency EVENTS OUT_PREFIX     async event -> host call (holdoff 0),
//                                              interleaved with the bare poll() wake-up
//                                              of a thread on an eventfd and on a pipe
//   bench_inproc storm EVENTS SECONDS HOLDOFF_MS OUTFILE_PREFIX
//   bench_inproc destroy CYCLES PENDING OUTFILE   pw_core_destroy with events pending
//   bench_inproc scale DEVICES ROUNDS OUTFILE  DEVICES x 2 ports, events on all
//
// Each prints "key=value" lines on stdout (read by bench/report.py) and
// writes the raw samples, one per line in nanoseconds, to the files named.
// The host's log callback only counts lines: OpenSM's own osm_log (format,
// write, optional flush) is not part of these numbers.
#include <portwatch/host.h>

#include <dirent.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <endian.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "vsim.h"

namespace {

const char *kOsmVersion = "OpenSM 3.3.23";

int64_t now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void sleep_ns(int64_t ns)
{
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void sleep_until_ns(int64_t t)
{
    timespec ts{static_cast<time_t>(t / 1000000000), static_cast<long>(t % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

[[noreturn]] void die(const std::string &what)
{
    std::fprintf(stderr, "bench_inproc: %s\n", what.c_str());
    std::exit(1);
}

vsim_command_fn vsim_fn()
{
    static vsim_command_fn fn =
        reinterpret_cast<vsim_command_fn>(dlsym(RTLD_DEFAULT, "vsim_command"));
    if (!fn)
        die("the verbs simulator is not preloaded (run through tests/with-vsim)");
    return fn;
}

std::string vsim(const std::string &command)
{
    char reply[512];
    if (vsim_fn()(command.c_str(), reply, sizeof reply) != 0)
        die("vsim '" + command + "' -> " + reply);
    return reply;
}

// The host: records every force_heavy_sweep call with its time.
class BenchHost {
public:
    struct Call {
        int64_t t_ns;
        int wake;
    };

    BenchHost() : cb_{this, log_cb, sm_state_cb, guid_cb, sweep_cb, smps_cb, exit_cb}
    {
        // Touched now, so that recording calls never grows the RSS that the
        // storm benchmark watches.
        calls_.resize(1 << 16);
        calls_.clear();
    }
    const pw_host *callbacks() const { return &cb_; }
    void set_guid(uint64_t host_order) { guid_net_ = htobe64(host_order); }

    size_t count() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return calls_.size();
    }
    bool wait_calls(size_t n, int64_t timeout_ns) const
    {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
                                 [&] { return calls_.size() >= n; });
    }
    Call call(size_t i) const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return calls_.at(i);
    }
    std::vector<Call> calls() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return calls_;
    }
    long log_lines() const { return log_lines_; }
    std::string last_line() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return last_line_;
    }
    std::string find_line(const char *prefix) const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return prefix_ == prefix ? prefix_line_ : "";
    }
    void remember(const char *prefix)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        prefix_ = prefix;
        prefix_line_.clear();
    }
    void clear()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        calls_.clear();
    }

private:
    static void log_cb(void *ctx, pw_log_level, const char *line)
    {
        auto *self = static_cast<BenchHost *>(ctx);
        ++self->log_lines_;
        std::lock_guard<std::mutex> lock(self->mutex_);
        if (!self->prefix_.empty() &&
            std::strncmp(line, self->prefix_.c_str(), self->prefix_.size()) == 0)
            self->prefix_line_ = line;
        self->last_line_ = line;
    }
    static pw_sm_state sm_state_cb(void *) { return PW_SM_MASTER; }
    static uint32_t smps_cb(void *) { return 0; }
    static int exit_cb(void *) { return -1; }
    static uint64_t guid_cb(void *ctx) { return static_cast<BenchHost *>(ctx)->guid_net_.load(); }
    static int sweep_cb(void *ctx, int wake)
    {
        int64_t t = now_ns();  // first: this instant is what is measured
        auto *self = static_cast<BenchHost *>(ctx);
        std::lock_guard<std::mutex> lock(self->mutex_);
        self->calls_.push_back({t, wake});
        self->changed_.notify_all();
        return 0;
    }

    pw_host cb_;
    std::atomic<uint64_t> guid_net_{0};
    std::atomic<long> log_lines_{0};
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::vector<Call> calls_;
    std::string last_line_, prefix_, prefix_line_;
};

// ------------------------------------------------------------ /proc readers
struct ThreadCpu {
    long ticks = 0;  // utime + stime, clock ticks
    int64_t ns = 0;  // schedstat: time on CPU
    long voluntary = 0, nonvoluntary = 0;
};

std::string find_thread_once(const char *name);

// The thread names itself when it starts: give it a moment.
std::string find_thread(const char *name)
{
    for (int i = 0; i < 1000; ++i) {
        std::string tid = find_thread_once(name);
        if (!tid.empty())
            return tid;
        sleep_ns(1000000);
    }
    return "";
}

std::string find_thread_once(const char *name)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        die("cannot open /proc/self/task");
    std::string found;
    while (dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.')
            continue;
        std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string c;
        if (comm >> c && c == name)
            found = e->d_name;
    }
    closedir(dir);
    return found;
}

ThreadCpu thread_cpu(const std::string &tid)
{
    ThreadCpu out;
    std::string base = "/proc/self/task/" + tid;
    std::ifstream stat(base + "/stat");
    std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t close = all.rfind(')');
    if (close != std::string::npos) {
        std::istringstream rest(all.substr(close + 2));
        std::string field;
        // Fields after "(comm)": 3 state ... 14 utime 15 stime.
        for (int i = 3; i <= 15 && rest >> field; ++i) {
            if (i == 14 || i == 15)
                out.ticks += std::stol(field);
        }
    }
    std::ifstream sched(base + "/schedstat");
    long long run_ns = 0;
    if (sched >> run_ns)
        out.ns = run_ns;
    std::ifstream status(base + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
            out.voluntary = std::stol(line.substr(line.find(':') + 1));
        if (line.rfind("nonvoluntary_ctxt_switches:", 0) == 0)
            out.nonvoluntary = std::stol(line.substr(line.find(':') + 1));
    }
    return out;
}

long vm_rss_kib()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stol(line.substr(6));
    return -1;
}

// ------------------------------------------------------------ statistics
double pct(std::vector<int64_t> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    // Nearest rank.
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
    if (rank < 1)
        rank = 1;
    return static_cast<double>(v[rank - 1]);
}

void print_stats(const std::string &key, const std::vector<int64_t> &ns)
{
    std::printf("%s.n=%zu\n", key.c_str(), ns.size());
    if (ns.empty())
        return;
    std::printf("%s.min_us=%.2f\n", key.c_str(), *std::min_element(ns.begin(), ns.end()) / 1e3);
    std::printf("%s.p50_us=%.2f\n", key.c_str(), pct(ns, 50) / 1e3);
    std::printf("%s.p90_us=%.2f\n", key.c_str(), pct(ns, 90) / 1e3);
    std::printf("%s.p99_us=%.2f\n", key.c_str(), pct(ns, 99) / 1e3);
    std::printf("%s.max_us=%.2f\n", key.c_str(), *std::max_element(ns.begin(), ns.end()) / 1e3);
}

void write_samples(const std::string &path, const std::vector<int64_t> &ns)
{
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f)
        die("cannot write " + path);
    for (int64_t v : ns)
        std::fprintf(f, "%lld\n", static_cast<long long>(v));
    std::fclose(f);
}

// A random pause of 150-350 us between events, so that the event thread is
// back in poll() and each event is timed from a sleeping thread.
int64_t gap_ns(std::mt19937 &rng)
{
    return std::uniform_int_distribution<int64_t>(150000, 350000)(rng);
}

constexpr uint64_t kNodeGuid = 0x0002c90300a00000ULL;

void add_device(const std::string &name, uint64_t node_guid, int ports)
{
    char add[160];
    std::snprintf(add, sizeof add, "add %s node_guid=0x%016llx style=mlx5 ports=%d", name.c_str(),
                  static_cast<unsigned long long>(node_guid), ports);
    vsim(add);
}

pw_core *create_core(BenchHost &host, const std::string &options)
{
    pw_core *core = pw_core_create(host.callbacks(), options.c_str(), kOsmVersion);
    if (!core)
        die("pw_core_create failed: " + host.last_line());
    return core;
}

std::string toggle(const std::string &dev, int port, bool down)
{
    return "port " + dev + " " + std::to_string(port) + (down ? " state=down" : " state=init");
}

void print_stopped(const BenchHost &host)
{
    std::string line = host.find_line("stopped:");
    std::printf("stopped_line=%s\n", line.c_str());
}

// ------------------------------------------------------------ latency + floor
// A thread blocked in poll() on one fd, woken by a write: the floor under
// anything an event thread can do. Each wake-up is timed from just before the
// write to just after poll() returned.
class Waiter {
public:
    Waiter(int rfd, int wfd, size_t width) : rfd_(rfd), wfd_(wfd), width_(width)
    {
        thread_ = std::thread([this] { run(); });
    }
    ~Waiter()
    {
        stop_ = true;
        poke();
        thread_.join();
    }
    int64_t sample()
    {
        int64_t t0 = now_ns();
        poke();
        std::unique_lock<std::mutex> lock(m_);
        if (!cv_.wait_for(lock, std::chrono::seconds(2), [&] { return woke_ >= t0; }))
            die("the floor's waiter did not wake");
        return woke_ - t0;
    }

private:
    void poke()
    {
        uint64_t one = 1;
        if (write(wfd_, &one, width_) < 0)
            die("write to the floor's fd");
    }
    void run()
    {
        pollfd p{rfd_, POLLIN, 0};
        while (!stop_) {
            if (poll(&p, 1, -1) <= 0)
                continue;
            int64_t t = now_ns();
            uint64_t buf;
            if (read(rfd_, &buf, width_) < 0)
                continue;
            std::lock_guard<std::mutex> lock(m_);
            woke_ = t;
            cv_.notify_all();
        }
    }
    int rfd_, wfd_;
    size_t width_;
    std::atomic<bool> stop_{false};
    std::mutex m_;
    std::condition_variable cv_;
    int64_t woke_ = 0;
    std::thread thread_;
};

int64_t vsim_last_event_ns()
{
    std::string reply = vsim("last-event");
    size_t pos = reply.find("mono_ns=");
    if (pos == std::string::npos)
        die("unexpected last-event reply: " + reply);
    return std::stoll(reply.substr(pos + 8));
}

// Interleaved, so that the plugin and the floors see the same machine: per
// round one eventfd wake-up, one pipe wake-up (the simulator's async fd is a
// pipe) and one port event through the plugin, in a shuffled order.
int bench_latency(int events, const std::string &prefix)
{
    vsim("reset");
    add_device("mlx5_0", kNodeGuid, 1);
    BenchHost host;
    host.set_guid(kNodeGuid + 1);
    host.remember("stopped:");
    pw_core *core = create_core(host, "portwatch.holdoff_ms=0");
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int p[2];
    if (efd < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
        die("eventfd/pipe");
    std::vector<int64_t> from_readable, from_command, cmd_dur, floor_efd, floor_pipe;
    {
        Waiter on_eventfd(efd, efd, 8), on_pipe(p[0], p[1], 1);
        sleep_ns(50000000);
        std::mt19937 rng(1);
        int order[3] = {0, 1, 2};
        for (int i = 0; i < events; ++i) {
            std::shuffle(order, order + 3, rng);
            for (int k : order) {
                sleep_ns(gap_ns(rng));
                if (k == 0) {
                    floor_efd.push_back(on_eventfd.sample());
                } else if (k == 1) {
                    floor_pipe.push_back(on_pipe.sample());
                } else {
                    // ACTIVE/INIT -> DOWN (mark), DOWN -> INIT (sweep): every
                    // event is a transition the host hears about.
                    size_t n = from_readable.size();
                    int64_t t0 = now_ns();
                    vsim(toggle("mlx5_0", 1, n % 2 == 0));
                    int64_t t1 = now_ns();
                    if (!host.wait_calls(n + 1, 2000000000))
                        die("event " + std::to_string(n) +
                            ": no host call within 2 s; last log: " + host.last_line());
                    BenchHost::Call c = host.call(n);
                    from_readable.push_back(c.t_ns - vsim_last_event_ns());
                    from_command.push_back(c.t_ns - t0);
                    cmd_dur.push_back(t1 - t0);
                }
            }
        }
        sleep_ns(50000000);
    }
    close(efd);
    close(p[0]);
    close(p[1]);
    size_t calls = host.count();
    pw_core_destroy(core);
    std::printf("latency.events=%d\nlatency.host_calls=%zu\n", events, calls);
    print_stats("latency", from_readable);
    print_stats("latency_from_command", from_command);
    print_stats("vsim_command", cmd_dur);
    print_stats("floor_eventfd", floor_efd);
    print_stats("floor_pipe", floor_pipe);
    print_stopped(host);
    write_samples(prefix + "plugin.txt", from_readable);
    write_samples(prefix + "eventfd.txt", floor_efd);
    write_samples(prefix + "pipe.txt", floor_pipe);
    return calls == static_cast<size_t>(events) ? 0 : 1;
}

// ------------------------------------------------------------ storm
int bench_storm(int events, double seconds, int holdoff_ms, const std::string &prefix)
{
    vsim("reset");
    add_device("mlx5_0", kNodeGuid, 1);
    BenchHost host;
    host.set_guid(kNodeGuid + 1);
    host.remember("stopped:");
    pw_core *core = create_core(host, "portwatch.holdoff_ms=" + std::to_string(holdoff_ms));
    sleep_ns(50000000);
    std::string tid = find_thread("portwatch");
    if (tid.empty())
        die("no thread named portwatch");

    // RSS every 100 ms, from before the storm until after it.
    std::atomic<bool> sampling{true};
    std::vector<std::pair<int64_t, long>> rss;
    std::mutex rss_mutex;
    int64_t t_begin = now_ns();
    std::thread sampler([&] {
        while (sampling) {
            long kib = vm_rss_kib();
            {
                std::lock_guard<std::mutex> lock(rss_mutex);
                rss.emplace_back(now_ns() - t_begin, kib);
            }
            sleep_ns(100000000);
        }
    });
    sleep_ns(300000000);
    ThreadCpu before = thread_cpu(tid);
    int64_t start = now_ns();
    int64_t period = static_cast<int64_t>(seconds * 1e9 / events);
    for (int i = 0; i < events; ++i) {
        sleep_until_ns(start + i * period);
        vsim(toggle("mlx5_0", 1, i % 2 == 0));
    }
    int64_t end = now_ns();
    // The last deferred sweep comes when the hold-off ends.
    sleep_ns((holdoff_ms + 200) * 1000000LL);
    ThreadCpu after = thread_cpu(tid);
    int64_t settled = now_ns();
    sleep_ns(300000000);
    sampling = false;
    sampler.join();
    std::vector<BenchHost::Call> calls = host.calls();
    pw_core_destroy(core);

    int sweeps = 0, marks = 0;
    int64_t min_gap = -1, last = -1;
    for (const auto &c : calls) {
        if (!c.wake) {
            ++marks;
            continue;
        }
        ++sweeps;
        if (last >= 0 && (min_gap < 0 || c.t_ns - last < min_gap))
            min_gap = c.t_ns - last;
        last = c.t_ns;
    }
    double storm_s = (end - start) / 1e9;
    double window_s = (settled - start) / 1e9;
    long bound = static_cast<long>(std::ceil((end - start) / 1e6 / holdoff_ms)) + 1;
    long ticks_per_s = sysconf(_SC_CLK_TCK);
    std::printf("storm.events=%d\nstorm.seconds=%.3f\nstorm.holdoff_ms=%d\n", events, storm_s,
                holdoff_ms);
    std::printf("storm.sweeps=%d\nstorm.marks=%d\nstorm.sweep_bound=%ld\n", sweeps, marks, bound);
    std::printf("storm.min_sweep_gap_ms=%.3f\n", min_gap / 1e6);
    std::printf("storm.cpu_ticks=%ld\nstorm.cpu_tick_hz=%ld\n", after.ticks - before.ticks,
                ticks_per_s);
    std::printf("storm.cpu_ms_stat=%.1f\n", (after.ticks - before.ticks) * 1000.0 / ticks_per_s);
    std::printf("storm.cpu_ms_schedstat=%.3f\n", (after.ns - before.ns) / 1e6);
    std::printf("storm.cpu_pct_of_core=%.3f\n", (after.ns - before.ns) / 1e7 / window_s);
    std::printf("storm.cpu_us_per_event=%.3f\n", (after.ns - before.ns) / 1e3 / events);
    std::printf("storm.thread_wakeups=%ld\n",
                (after.voluntary - before.voluntary) + (after.nonvoluntary - before.nonvoluntary));
    std::string stats = vsim("stats");
    std::printf("storm.vsim_stats=%s\n", stats.c_str());
    print_stopped(host);
    FILE *f = std::fopen((prefix + "rss.txt").c_str(), "w");
    if (!f)
        die("cannot write rss samples");
    long rss_min = -1, rss_max = -1, rss_first_storm = -1, rss_last_storm = -1;
    for (const auto &s : rss) {
        std::fprintf(f, "%.3f %ld\n", s.first / 1e9, s.second);
        double t = s.first / 1e9;
        double t0 = (start - t_begin) / 1e9, t1 = (end - t_begin) / 1e9;
        if (t >= t0 && t <= t1) {
            if (rss_first_storm < 0)
                rss_first_storm = s.second;
            rss_last_storm = s.second;
        }
        rss_min = rss_min < 0 ? s.second : std::min(rss_min, s.second);
        rss_max = std::max(rss_max, s.second);
    }
    std::fclose(f);
    std::printf("storm.rss_samples=%zu\nstorm.rss_min_kib=%ld\nstorm.rss_max_kib=%ld\n", rss.size(),
                rss_min, rss_max);
    std::printf("storm.rss_first_kib=%ld\nstorm.rss_last_kib=%ld\n", rss_first_storm,
                rss_last_storm);
    return 0;
}

// ------------------------------------------------------------ destroy
// The floor for destroy: a bare thread in the same situation, poll() on an
// eventfd (the stop signal) and a pipe holding PENDING bytes that it reads
// one at a time, checking a stop flag between reads as the event thread
// does; timed from setting the flag to the end of join().
int64_t destroy_floor_cycle(int pending)
{
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int p[2];
    if (efd < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
        die("eventfd/pipe");
    std::atomic<bool> stopping{false};
    std::thread worker([&] {
        pollfd fds[2] = {{efd, POLLIN, 0}, {p[0], POLLIN, 0}};
        while (!stopping) {
            if (poll(fds, 2, -1) < 0)
                continue;
            char byte;
            for (int i = 0; i < 64 && !stopping && read(p[0], &byte, 1) == 1; ++i) {
            }
        }
    });
    char bytes[4096] = {};
    for (int left = pending; left > 0;) {
        ssize_t n = write(p[1], bytes, std::min<size_t>(left, sizeof bytes));
        if (n <= 0)
            die("write to the floor's pipe");
        left -= static_cast<int>(n);
    }
    int64_t t0 = now_ns();
    stopping = true;
    uint64_t one = 1;
    if (write(efd, &one, sizeof one) < 0)
        die("write to the floor's eventfd");
    worker.join();
    int64_t dt = now_ns() - t0;
    close(efd);
    close(p[0]);
    close(p[1]);
    return dt;
}

int bench_destroy(int cycles, int pending, const std::string &out)
{
    vsim("reset");
    add_device("mlx5_0", kNodeGuid, 1);
    std::vector<int64_t> lat, create, floor;
    for (int c = 0; c < cycles; ++c) {
        BenchHost host;
        host.set_guid(kNodeGuid + 1);
        int64_t t0 = now_ns();
        pw_core *core = create_core(host, "portwatch.holdoff_ms=100");
        create.push_back(now_ns() - t0);
        // The device is ACTIVE or INIT here; every toggle is a transition.
        for (int i = 0; i < pending; ++i)
            vsim(toggle("mlx5_0", 1, i % 2 == 0));
        int64_t t1 = now_ns();
        pw_core_destroy(core);
        lat.push_back(now_ns() - t1);
        vsim("port mlx5_0 1 state=active quiet");
        floor.push_back(destroy_floor_cycle(pending));
    }
    std::string stats = vsim("stats");
    std::printf("destroy.cycles=%d\ndestroy.pending_events=%d\n", cycles, pending);
    print_stats("destroy", lat);
    print_stats("destroy_floor", floor);
    print_stats("create", create);
    std::printf("destroy.vsim_stats=%s\n", stats.c_str());
    write_samples(out, lat);
    return stats.find(" open_contexts=0 ") != std::string::npos ? 0 : 1;
}

// ------------------------------------------------------------ scale
int bench_scale(int devices, int rounds, const std::string &out)
{
    vsim("reset");
    std::vector<std::string> names;
    for (int d = 0; d < devices; ++d) {
        std::string name = "mlx5_" + std::to_string(d);
        add_device(name, kNodeGuid + 0x100 * d, 2);
        names.push_back(name);
    }
    // OpenSM's port: port 2 of the device the core serves last (names in
    // lexical order), so every other device's events are drained first.
    size_t watched = std::max_element(names.begin(), names.end()) - names.begin();
    BenchHost host;
    host.set_guid(kNodeGuid + 0x100 * watched + 2);
    host.remember("stopped:");
    pw_core *core = create_core(host, "portwatch.holdoff_ms=0");
    sleep_ns(50000000);
    std::string tid = find_thread("portwatch");
    std::mt19937 rng(3);
    std::vector<int64_t> from_first, from_watched;
    ThreadCpu before = thread_cpu(tid);
    for (int r = 0; r < rounds * 2; ++r) {
        sleep_ns(gap_ns(rng) + 200000);
        bool down = r % 2 == 0;
        int64_t t_first = now_ns(), t_watched = 0;
        for (size_t d = 0; d < names.size(); ++d) {
            for (int port = 1; port <= 2; ++port) {
                if (d == watched && port == 2)
                    continue;
                vsim(toggle(names[d], port, down));
            }
        }
        t_watched = now_ns();
        vsim(toggle(names[watched], 2, down));
        if (!host.wait_calls(r + 1, 2000000000))
            die("round " + std::to_string(r) + ": no host call; last log: " + host.last_line());
        BenchHost::Call c = host.call(r);
        from_first.push_back(c.t_ns - t_first);
        from_watched.push_back(c.t_ns - t_watched);
    }
    sleep_ns(50000000);
    ThreadCpu after = thread_cpu(tid);
    size_t calls = host.count();
    pw_core_destroy(core);
    long events = 2L * rounds * devices * 2;
    std::printf("scale.devices=%d\nscale.ports=%d\nscale.rounds=%d\nscale.events=%ld\n", devices,
                devices * 2, rounds * 2, events);
    std::printf("scale.host_calls=%zu\n", calls);
    print_stats("scale_first", from_first);
    print_stats("scale_watched", from_watched);
    std::printf("scale.cpu_ms=%.3f\nscale.cpu_us_per_event=%.3f\nscale.cpu_us_per_round=%.3f\n",
                (after.ns - before.ns) / 1e6, (after.ns - before.ns) / 1e3 / events,
                (after.ns - before.ns) / 1e3 / (rounds * 2));
    print_stopped(host);
    write_samples(out, from_first);
    return calls == static_cast<size_t>(rounds * 2) ? 0 : 1;
}

int usage()
{
    std::fprintf(stderr, "usage: bench_inproc latency EVENTS OUT_PREFIX\n"
                         "       bench_inproc storm EVENTS SECONDS HOLDOFF_MS OUT_PREFIX\n"
                         "       bench_inproc destroy CYCLES PENDING OUT\n"
                         "       bench_inproc scale DEVICES ROUNDS OUT\n");
    return 2;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    std::string what = argv[1];
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (what == "latency" && argc == 4)
        return bench_latency(std::atoi(argv[2]), argv[3]);
    if (what == "storm" && argc == 6)
        return bench_storm(std::atoi(argv[2]), std::atof(argv[3]), std::atoi(argv[4]), argv[5]);
    if (what == "destroy" && argc == 5)
        return bench_destroy(std::atoi(argv[2]), std::atoi(argv[3]), argv[4]);
    if (what == "scale" && argc == 5)
        return bench_scale(std::atoi(argv[2]), std::atoi(argv[3]), argv[4]);
    return usage();
}
