// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A private directory under /tmp for one test case, removed with everything
// in it when the case ends.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

namespace pwtest {

struct TempDir {
    std::string path;
    TempDir()
    {
        char tmpl[] = "/tmp/pw-test-XXXXXX";
        BOOST_REQUIRE(mkdtemp(tmpl));
        path = tmpl;
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
};

}  // namespace pwtest
