// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <vector>

#include "port_tracker.hpp"

using namespace portwatch;

namespace portwatch {
// Readable failures for the per-element comparisons below.
std::ostream &operator<<(std::ostream &os, Change c)
{
    return os << change_name(c);
}
}  // namespace portwatch

namespace {

PortSnapshot at(LinkState state, uint16_t lid = 1)
{
    PortSnapshot s;
    s.state = state;
    s.phys_state = state == LinkState::Down ? 2 : 5;
    s.lid = lid;
    s.sm_lid = 1;
    return s;
}

// Feeds the states a port goes through and returns the changes seen.
std::vector<Change> walk(std::initializer_list<PortSnapshot> states)
{
    PortTracker tracker;
    std::vector<Change> out;
    for (const PortSnapshot &s : states)
        out.push_back(tracker.update(s).change);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(port_tracker)

BOOST_AUTO_TEST_CASE(first_sight_is_initial)
{
    PortTracker tracker;
    Transition t = tracker.update(at(LinkState::Active));
    BOOST_TEST((t.change == Change::Initial));
    BOOST_TEST(!t.from);
    BOOST_TEST(tracker.last().has_value());
}

BOOST_AUTO_TEST_CASE(ib_bounce_of_the_sm_port)
{
    // ACTIVE, cable pulled, link retrains to INIT, the SM activates it.
    auto changes = walk({at(LinkState::Active), at(LinkState::Down), at(LinkState::Init),
                         at(LinkState::Armed), at(LinkState::Active)});
    std::vector<Change> expect{Change::Initial, Change::LinkLost, Change::LinkBack,
                               Change::Progress, Change::Progress};
    BOOST_TEST(changes == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(duplicate_queries_are_no_change)
{
    // rxe's double PORT_ACTIVE, mlx5's PORT_ERR for DOWN and again for INIT
    // read back the same state twice: the second read is no transition.
    auto changes = walk({at(LinkState::Down), at(LinkState::Active), at(LinkState::Active)});
    std::vector<Change> expect{Change::Initial, Change::LinkBack, Change::None};
    BOOST_TEST(changes == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(down_too_short_to_see_is_still_a_link_back)
{
    auto changes = walk({at(LinkState::Active), at(LinkState::Init)});
    BOOST_TEST((changes[1] == Change::LinkBack));
    changes = walk({at(LinkState::Armed), at(LinkState::Init)});
    BOOST_TEST((changes[1] == Change::LinkBack));
}

BOOST_AUTO_TEST_CASE(lid_and_sm_lid_changes_are_attributes)
{
    auto changes = walk({at(LinkState::Active, 1), at(LinkState::Active, 7)});
    BOOST_TEST((changes[1] == Change::Attributes));
    PortSnapshot moved_sm = at(LinkState::Active);
    moved_sm.sm_lid = 9;
    changes = walk({at(LinkState::Active), moved_sm});
    BOOST_TEST((changes[1] == Change::Attributes));
}

BOOST_AUTO_TEST_CASE(classify_covers_every_pair)
{
    const LinkState all[] = {LinkState::Down, LinkState::Init, LinkState::Armed, LinkState::Active};
    for (LinkState from : all) {
        for (LinkState to : all) {
            Change c = classify(at(from), at(to));
            bool from_up = from != LinkState::Down, to_up = to != LinkState::Down;
            if (from_up && !to_up)
                BOOST_TEST((c == Change::LinkLost));
            else if (!from_up && to_up)
                BOOST_TEST((c == Change::LinkBack));
            else if (from == to)
                BOOST_TEST((c == Change::None));
            else if (to == LinkState::Init)
                BOOST_TEST((c == Change::LinkBack));
            else
                BOOST_TEST((c == Change::Progress));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
