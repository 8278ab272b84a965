// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Unit tests of the pure pipeline stages: options, port tracker, policy, telemetry.
#define BOOST_TEST_MODULE portwatch_logic
#include <boost/test/unit_test.hpp>
