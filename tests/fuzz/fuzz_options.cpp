// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: portwatch's option parser (plugin/options.cpp) on
// arbitrary bytes, as OpenSM would hand over event_plugin_options.
//
// Checks, besides "no crash, no sanitizer report":
// - the result is either options or one error, never both or neither;
// - an error is one bounded log line (no newline, the token shown at most
//   80 characters plus the fixed text);
// - accepted options survive a round trip: their describe() line, written
//   back as portwatch.KEY=VALUE tokens, parses to the same options;
// - tokens that are not portwatch's never change the outcome.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "options.hpp"

using portwatch::parse_options;
using portwatch::ParsedOptions;

namespace {

[[noreturn]] void fail(const char *what, const std::string &input, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_options: %s\n  input: '%s'\n  detail: '%s'\n", what, input.c_str(),
                 detail.c_str());
    std::abort();
}

std::string outcome(const ParsedOptions &p)
{
    return p.options ? "ok " + p.options->describe() : "error " + p.error;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // OpenSM passes a C string: whatever follows a NUL is not seen.
    std::string input(reinterpret_cast<const char *>(data), size);
    input = input.c_str();

    ParsedOptions p = parse_options(input.c_str());
    if (p.options.has_value() == !p.error.empty())
        fail("neither or both of options and error", input, outcome(p));
    if (!p.options) {
        if (p.error.find('\n') != std::string::npos || p.error.find('\r') != std::string::npos)
            fail("error is not one line", input, p.error);
        if (p.error.size() > 400)
            fail("error line is not bounded", input, p.error);
        return 0;
    }

    // Round trip: "port=auto holdoff_ms=100 ..." -> "portwatch.port=auto ...".
    std::string described = p.options->describe(), again;
    size_t start = 0;
    while (start < described.size()) {
        size_t end = described.find(' ', start);
        if (end == std::string::npos)
            end = described.size();
        again += "portwatch." + described.substr(start, end - start) + " ";
        start = end + 1;
    }
    ParsedOptions q = parse_options(again.c_str());
    if (!q.options || q.options->describe() != described)
        fail("describe() does not parse back to the same options", input,
             again + " -> " + outcome(q));

    // Foreign tokens are ignored, wherever they stand.
    ParsedOptions r = parse_options(("other.plugin=1 " + input + " x=y").c_str());
    if (outcome(r) != outcome(p))
        fail("a foreign token changed the outcome", input, outcome(r));
    return 0;
}
