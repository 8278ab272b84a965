// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Storage for process-wide objects that must outlive every other thread.
//
// The host process (opensm) may still call into the simulator from its own
// threads while exit() runs static destructors, and the control socket thread
// is never joined.  Destroying the registry at exit would turn those calls into
// use-after-free, so it is built once and deliberately never destroyed.  A
// union with a user-provided, empty destructor does exactly that without any
// heap allocation.
#pragma once

#include <utility>

namespace vsim {

template <typename T>
union NoDestructor {
    T value;

    template <typename... Args>
    explicit NoDestructor(Args &&...args) : value(std::forward<Args>(args)...)
    {
    }
    ~NoDestructor() {}  // intentionally does not destroy value

    NoDestructor(const NoDestructor &) = delete;
    NoDestructor &operator=(const NoDestructor &) = delete;
};

}  // namespace vsim
