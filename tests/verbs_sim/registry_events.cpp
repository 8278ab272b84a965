// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Async events: queueing them to contexts, the state changes and failures
// that produce them, and ibv_get_async_event / ibv_ack_async_event.
#include "registry.hpp"

#include "diag.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vsim {

namespace {

bool is_port_event(ibv_event_type type)
{
    return type != IBV_EVENT_DEVICE_FATAL;
}

std::string port_range_error(const char *cmd, const Device &dev, int port)
{
    return std::string(cmd) + ": device '" + dev.name + "' has ports 1.." +
           std::to_string(dev.ports.size()) + ", not " + std::to_string(port);
}

}  // namespace

void Registry::queue_event(Device &dev, Event ev)
{
    for (auto &c : contexts_)
        if (c->dev == &dev)
            queue_event(*c, ev);
}

// Dead contexts get nothing more: after a fatal error or a removal the
// kernel stops delivering events to the old context.
void Registry::queue_event(Context &ctx, Event ev)
{
    if (ctx.dead)
        return;
    const char byte = 0;
    timespec now;
    (void)clock_gettime(CLOCK_MONOTONIC, &now);  // CLOCK_MONOTONIC cannot fail
    if (::write(ctx.writer.get(), &byte, 1) != 1) {
        // Only possible with ~64k unread events: the caller is not reading.
        warn("event queue of a %s context is full; event dropped", ctx.dev->name.c_str());
        return;
    }
    ctx.queue.push_back(ev);
    ctx.dev->stats.events_queued++;
    last_event_ns_ = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Make the context's async fd look like a disassociated uverbs event file
// while keeping its NUMBER valid, so the caller's ibv_close_device() closes
// it exactly once: put the write end of a reader-less pipe on that number.
// poll() on it reports POLLERR (the kernel's event file reports EPOLLERR
// after disassociation).  Closing the old write end wakes a reader blocked in
// read() on the old pipe with end-of-file, which becomes EIO.
void Registry::disconnect(Context &ctx)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        sim_failure("pipe2 for a disassociated context: %s", errno_text(errno).c_str());
    ::close(fds[0]);
    if (::dup3(fds[1], ctx.async_fd.get(), O_CLOEXEC) < 0)
        sim_failure("dup3 onto async_fd %d: %s", ctx.async_fd.get(), errno_text(errno).c_str());
    ::close(fds[1]);
    ctx.writer.reset();
    ctx.queue.clear();
    ctx.disconnected = true;
}

// Hot unplug.  Like the kernel, queue DEVICE_FATAL to each live context
// first; once a context's queue is drained, its fd reports POLLERR and reads
// fail with EIO.  `abrupt` skips that and disconnects at once (lost events).
void Registry::remove_locked(Device &dev, bool abrupt)
{
    dev.present = false;
    for (auto &c : contexts_) {
        if (c->dev != &dev)
            continue;
        if (!abrupt)
            queue_event(*c, Event{IBV_EVENT_DEVICE_FATAL, 0});
        c->dead = true;
        c->removed = true;
        if (abrupt || c->queue.empty())
            disconnect(*c);
    }
    changed_.notify_all();
}

Reply Registry::remove(const std::string &name, bool abrupt)
{
    std::lock_guard<std::mutex> lock(mu_);
    Device *dev = find_present(name);
    if (!dev)
        return Reply::failure("remove: no device named '" + name + "'");
    remove_locked(*dev, abrupt);
    return Reply::success();
}

Reply Registry::fatal(const std::string &name)
{
    std::lock_guard<std::mutex> lock(mu_);
    Device *dev = find_present(name);
    if (!dev)
        return Reply::failure("fatal: no device named '" + name + "'");
    for (auto &c : contexts_) {
        if (c->dev != dev || c->dead)
            continue;
        queue_event(*c, Event{IBV_EVENT_DEVICE_FATAL, 0});
        c->dead = true;
    }
    changed_.notify_all();
    return Reply::success();
}

Reply Registry::inject(const std::string &name, int port, ibv_event_type type)
{
    std::lock_guard<std::mutex> lock(mu_);
    Device *dev = find_present(name);
    if (!dev)
        return Reply::failure("event: no device named '" + name + "'");
    if (!is_port_event(type) && port != 0)
        return Reply::failure("event: device_fatal is a device event; give port 0");
    if (is_port_event(type) && (port < 1 || port > static_cast<int>(dev->ports.size())))
        return Reply::failure(port_range_error("event", *dev, port));
    queue_event(*dev, Event{type, port});
    return Reply::success();
}

Reply Registry::change_port(const std::string &name, int port, const PortChange &change)
{
    std::lock_guard<std::mutex> lock(mu_);
    Device *dev = find_present(name);
    if (!dev)
        return Reply::failure("port: no device named '" + name + "'");
    if (port < 1 || port > static_cast<int>(dev->ports.size()))
        return Reply::failure(port_range_error("port", *dev, port));
    if (change.state && !style_supports_state(dev->style, *change.state))
        return Reply::failure(std::string("port: style ") + style_name(dev->style) +
                              " has no INIT or ARMED port state");

    Port &p = dev->ports[static_cast<std::size_t>(port - 1)];
    const Port old = p;
    std::vector<ibv_event_type> events;
    if (change.state) {
        p.state = *change.state;
        p.phys_state = phys_state_for(p.state);
        if (p.state != old.state)
            events = state_change_events(dev->style, p.state);
    }
    if (change.phys_state)
        p.phys_state = *change.phys_state;
    if (change.link_layer)
        p.link_layer = *change.link_layer;
    if (change.lid) {
        p.lid = *change.lid;
        if (p.lid != old.lid)
            events.push_back(IBV_EVENT_LID_CHANGE);
    }
    if (change.sm_lid) {
        p.sm_lid = *change.sm_lid;
        if (p.sm_lid != old.sm_lid)
            events.push_back(IBV_EVENT_SM_CHANGE);
    }
    if (change.guid) {
        p.guid = *change.guid;
        if (p.guid != old.guid)
            events.push_back(IBV_EVENT_GID_CHANGE);
    }
    if (!change.quiet)
        for (ibv_event_type type : events)
            queue_event(*dev, Event{type, port});
    return Reply::success();
}

int Registry::get_async_event(ibv_context *context, ibv_async_event *event)
{
    int fd;
    {
        std::lock_guard<std::mutex> lock(mu_);
        Context &ctx = context_of(context, "ibv_get_async_event");
        int err;
        if (take_fault(Call::get_async_event, err)) {
            if (err)  // 0: errno=unchanged, a short read
                errno = err;
            return -1;
        }
        if (ctx.disconnected) {
            errno = EIO;
            return -1;
        }
        fd = ctx.async_fd.get();
    }

    // Like the real library: one plain read() on async_fd, outside the lock.
    // A blocking fd blocks, a non-blocking empty one fails with EAGAIN, a
    // signal gives EINTR; none of these is retried.
    char byte;
    ssize_t n = ::read(fd, &byte, 1);
    int read_errno = errno;

    std::lock_guard<std::mutex> lock(mu_);
    Context *ctx = find_context(context);
    if (!ctx)
        caller_bug("ibv_get_async_event: context %p was closed while a thread was waiting "
                   "in ibv_get_async_event() on it",
                   static_cast<void *>(context));
    // cppcheck-suppress nullPointerRedundantCheck ; caller_bug() does not return
    if (ctx->disconnected || n == 0) {
        // Removal happened while we were reading: the fd number now holds
        // the error pipe (EBADF on read) or the old pipe hit end-of-file.
        errno = EIO;
        return -1;
    }
    if (n < 0) {
        errno = read_errno;
        return -1;
    }
    if (ctx->queue.empty())
        sim_failure("ibv_get_async_event: pipe byte without a queued event");

    // cppcheck-suppress containerOutOfBounds ; sim_failure() does not return
    Event ev = ctx->queue.front();
    ctx->queue.pop_front();
    std::memset(event, 0, sizeof *event);
    event->element.port_num = ev.port;
    event->event_type = ev.type;
    ctx->dev->stats.events_read++;
    unacked_.push_back(Delivered{ctx->id, ctx->dev, ev});
    if (ctx->removed && ctx->queue.empty())
        disconnect(*ctx);  // last event of a removed device read: now POLLERR/EIO
    return 0;
}

// The event struct does not say which context it came from, so an ack is
// matched to the oldest delivered, unacknowledged event of the same type and
// port.  An ack that matches nothing is a double ack (or an ack after the
// context was closed, or of a made-up event): abort.
void Registry::ack_async_event(const ibv_async_event *event)
{
    std::lock_guard<std::mutex> lock(mu_);
    if (!event)
        caller_bug("ibv_ack_async_event: NULL event");
    auto it = std::find_if(unacked_.begin(), unacked_.end(), [&](const Delivered &d) {
        return d.event.type == event->event_type && d.event.port == event->element.port_num;
    });
    if (it == unacked_.end())
        caller_bug("ibv_ack_async_event: no delivered, unacknowledged event of type %d "
                   "(%s) port %d: acknowledged twice, after ibv_close_device(), or never "
                   "returned by ibv_get_async_event()",
                   static_cast<int>(event->event_type), ibv_event_type_str(event->event_type),
                   event->element.port_num);
    // cppcheck-suppress derefInvalidIteratorRedundantCheck ; caller_bug() does not return
    it->dev->stats.acks++;
    unacked_.erase(it);
}

}  // namespace vsim
