// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Options as a test sets them: parsed from the same text an admin writes in
// event_plugin_options, so that a test never builds a value the parser
// would refuse. The test case fails on a refusal, naming the error.
#pragma once

#include <boost/test/unit_test.hpp>

#include <string>

#include "options.hpp"

namespace pwtest {

inline portwatch::Options opts(const std::string &text = "")
{
    portwatch::ParsedOptions p = portwatch::parse_options(text.c_str());
    BOOST_REQUIRE_MESSAGE(p.options, p.error);
    return *p.options;
}

}  // namespace pwtest
