// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The one file portwatch writes (portwatch.metrics_file), written the way
// node_exporter's textfile collector expects: a temporary file in the same
// directory, renamed over the path, so a scrape never sees half a file.
// The temporary is created exclusively and without following symlinks, and
// the rename replaces a symlink at the path rather than writing through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace portwatch {

// The longest path and file name metrics_path() accepts: PATH_MAX less its
// NUL, and NAME_MAX less what the temporary adds (".", ".PID.tmp", a pid of
// up to 7 digits).
constexpr size_t kMetricsPathMax = 4095;
constexpr size_t kMetricsNameMax = 255 - 13;

// The configured path with each "%g" replaced by the port GUID as Debian's
// opensm service names its per-port log files (0x0002c90300001001); throws
// std::runtime_error naming the option when the path has "%g" and the GUID
// is 0 (OpenSM has not said which port it is bound to), or when the path or
// the file name is too long once expanded.
std::string metrics_path(const std::string &configured, uint64_t port_guid);

class MetricsFile {
public:
    // Opens the directory of the absolute path; throws std::runtime_error
    // naming the option and the problem when it cannot.
    explicit MetricsFile(const std::string &path);
    ~MetricsFile();
    MetricsFile(const MetricsFile &) = delete;
    MetricsFile &operator=(const MetricsFile &) = delete;

    // 0 once text is at the path (mode 0644), or the errno of the failure.
    int write(const std::string &text);
    // Removes the file (at stop: a stopped plugin has no state to show).
    void remove() noexcept;
    const std::string &path() const { return path_; }

private:
    std::string path_;
    std::string name_;  // within the directory
    std::string temp_;  // within the directory: hidden, and not *.prom
    int dir_fd_ = -1;
};

}  // namespace portwatch
