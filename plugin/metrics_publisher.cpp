// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "metrics_publisher.hpp"

#include <algorithm>
#include <stdexcept>

#include "errno_text.hpp"

namespace portwatch {

namespace {
// The metrics file is rewritten at most once per hold-off, and never more
// than ten times a second.
constexpr Millis kMetricsShortest{100};
}  // namespace

MetricsPublisher::MetricsPublisher(const Host &host, const Options &opts)
    : host_(host), shortest_(std::max(opts.holdoff, kMetricsShortest)),
      backoff_(shortest_, std::max(opts.retry_max, shortest_))
{
    if (!opts.metrics_file.empty())
        file_ = std::make_unique<MetricsFile>(opts.metrics_file);
}

std::optional<TimePoint> MetricsPublisher::deadline() const
{
    if (!pending_)
        return std::nullopt;
    return next_;
}

void MetricsPublisher::offer(TimePoint now, MetricsSnapshot snapshot, bool first)
{
    if (!file_)
        return;
    pending_ = first || snapshot != written_;
    if (!pending_ || (!first && now < next_))
        return;  // unchanged, or due at next_ (the thread's poll timeout wakes it)
    int err = file_->write(render_metrics(snapshot));
    if (err && first)
        throw std::runtime_error("portwatch.metrics_file: cannot write " + file_->path() + ": " +
                                 errno_text(err));
    if (err) {
        Millis pause = backoff_.take();
        next_ = now + pause;
        host_.log(err == error_ ? PW_LOG_DEBUG : PW_LOG_ERROR,
                  "cannot write metrics file %s: %s; trying again in %lld ms",
                  file_->path().c_str(), errno_text(err).c_str(),
                  static_cast<long long>(pause.count()));
        error_ = err;
        return;
    }
    if (error_)
        host_.log(PW_LOG_INFO, "metrics file %s written again", file_->path().c_str());
    error_ = 0;
    backoff_.reset();
    written_ = std::move(snapshot);
    pending_ = false;
    next_ = now + shortest_;
}

void MetricsPublisher::remove()
{
    if (file_)
        file_->remove();
}

}  // namespace portwatch
