// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// An eventfd that lets other threads wake the event thread out of poll().
#pragma once

namespace portwatch {

class Wakeup {
public:
    Wakeup();  // throws std::system_error
    ~Wakeup();
    Wakeup(const Wakeup &) = delete;
    Wakeup &operator=(const Wakeup &) = delete;

    int fd() const { return fd_; }
    void signal();  // async-signal-safe and thread safe
    void drain();   // clears the readable state

private:
    int fd_;
};

}  // namespace portwatch
