// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "metrics_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "errno_text.hpp"

namespace portwatch {

namespace {

// Closes an fd on every path out of write().
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    int get() const { return fd_; }
    // Closes now and reports the error (a full disk may only show here).
    int close()
    {
        int rc = ::close(fd_);
        fd_ = -1;
        return rc == 0 ? 0 : errno;
    }

private:
    int fd_;
};

}  // namespace

std::string metrics_path(const std::string &configured, uint64_t port_guid)
{
    std::string out;
    for (size_t i = 0; i < configured.size(); ++i) {
        if (configured.compare(i, 2, "%g") != 0) {
            out += configured[i];
            continue;
        }
        if (port_guid == 0)
            throw std::runtime_error("portwatch.metrics_file: " + configured +
                                     ": %g stands for OpenSM's port GUID, and OpenSM has none");
        char guid[24];
        (void)std::snprintf(guid, sizeof(guid), "0x%016llx",
                            static_cast<unsigned long long>(port_guid));
        out += guid;
        ++i;
    }
    // Checked on the name as it will be, not as configured: each %g grows
    // by 16 bytes. The temporary beside it must fit in a directory entry too.
    const size_t name_size = out.size() - out.rfind('/') - 1;
    if (out.size() > kMetricsPathMax || name_size > kMetricsNameMax)
        throw std::runtime_error("portwatch.metrics_file: " + out + ": " +
                                 (out.size() > kMetricsPathMax
                                      ? "the path is " + std::to_string(out.size()) +
                                            " bytes, at most " + std::to_string(kMetricsPathMax)
                                      : "the file name is " + std::to_string(name_size) +
                                            " bytes, at most " + std::to_string(kMetricsNameMax)) +
                                 (out == configured ? "" : " (with %g expanded)"));
    return out;
}

MetricsFile::MetricsFile(const std::string &path) : path_(path)
{
    size_t slash = path.rfind('/');
    std::string dir = slash == 0 ? "/" : path.substr(0, slash);
    name_ = path.substr(slash + 1);
    temp_ = "." + name_ + "." + std::to_string(getpid()) + ".tmp";
    dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd_ < 0)
        throw std::runtime_error("portwatch.metrics_file: cannot open directory " + dir + ": " +
                                 errno_text(errno));
}

MetricsFile::~MetricsFile()
{
    if (dir_fd_ >= 0)
        ::close(dir_fd_);
}

int MetricsFile::write(const std::string &text)
{
    // A temporary left by a crash of this very pid is ours to replace.
    ::unlinkat(dir_fd_, temp_.c_str(), 0);
    Fd fd(::openat(dir_fd_, temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0644));
    if (fd.get() < 0)
        return errno;
    int err = 0;
    // 0644 whatever OpenSM's umask: node_exporter usually runs as another user.
    if (::fchmod(fd.get(), 0644) != 0)
        err = errno;
    for (size_t done = 0; !err && done < text.size();) {
        ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            err = errno;
        else
            done += static_cast<size_t>(n);
    }
    if (int close_err = fd.close(); !err)
        err = close_err;
    if (!err && ::renameat(dir_fd_, temp_.c_str(), dir_fd_, name_.c_str()) != 0)
        err = errno;
    if (err)
        ::unlinkat(dir_fd_, temp_.c_str(), 0);
    return err;
}

void MetricsFile::remove() noexcept
{
    ::unlinkat(dir_fd_, name_.c_str(), 0);
}

}  // namespace portwatch
