// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The control language: one text line in, one Reply out.  Used by
// vsim_command(), the VSIM_CONFIG file and the VSIM_SOCKET server alike, so
// all three ways in accept exactly the same commands.
#pragma once

#include "model.hpp"

#include <string_view>

namespace vsim {

// Parses and executes one command line ('#' starts a comment).  An empty line
// is an error here; the config reader skips blank lines itself.
Reply run_command(std::string_view line);

// True if the line holds nothing but whitespace and/or a comment.
bool is_blank_command(std::string_view line);

}  // namespace vsim
