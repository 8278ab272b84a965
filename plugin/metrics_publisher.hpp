// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Keeps the metrics file (portwatch.metrics_file) in step with the plugin.
//
// The event thread offers a snapshot at the end of every wake-up; the file
// is rewritten only when the snapshot differs from the one last written, and
// at most once per hold-off (never more than ten times a second), so an idle
// plugin never wakes for it. A failing write is one ERROR line and a retry on
// a doubling backoff; only the first write may fail the plugin's load.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backoff.hpp"
#include "clock.hpp"
#include "host.hpp"
#include "metrics.hpp"
#include "metrics_file.hpp"
#include "options.hpp"

namespace portwatch {

class MetricsPublisher {
public:
    // Opens the file's directory when a file is configured (its name already
    // expanded); throws std::runtime_error naming the problem when it cannot.
    MetricsPublisher(const Host &host, const Options &opts);

    bool enabled() const { return file_ != nullptr; }
    // Writes snapshot if it changed and a write is due; first: the write at
    // load, which throws on failure.
    void offer(TimePoint now, MetricsSnapshot snapshot, bool first = false);
    // When a changed snapshot is due to be written; empty when none waits.
    std::optional<TimePoint> deadline() const;
    // Removes the file: a stopped plugin has no state to show.
    void remove();

private:
    const Host &host_;
    Millis shortest_;
    std::unique_ptr<MetricsFile> file_;  // null when off
    MetricsSnapshot written_;
    bool pending_ = false;  // changed since written; due at next_
    TimePoint next_{};
    Backoff backoff_;
    int error_ = 0;  // the failure last logged, 0 while writes succeed
};

}  // namespace portwatch
