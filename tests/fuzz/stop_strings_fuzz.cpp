// The stop-string matcher against std::string::find. Input: byte 0 gives the number of stop
// strings (1..4) and whether they are included in the cut; the rest, split at 0x00 bytes, is those
// stop strings and then the texts of the generated tokens, appended one per check() as generate()
// does. The contract checked (stop_strings.hpp): check() reports a match exactly at the first step
// whose text contains a stop string; the match is the earliest-starting occurrence (then the
// longest); hold_back() is the longest suffix that is a proper prefix of a stop string. After a
// match the generation restarts from an empty text (reset()).
#include <nexttok/stopping/stop_strings.hpp>

#include "fuzz_support.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::vector<std::string> split(std::string_view in) {
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const std::size_t end = in.find('\0', start);
        parts.emplace_back(in.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

std::size_t brute_hold_back(std::string_view text, const std::vector<std::string>& strings) {
    std::size_t held = 0;
    for (const std::string& s : strings)
        for (std::size_t k = 1; k < s.size() && k <= text.size(); ++k)
            if (text.substr(text.size() - k) == std::string_view(s).substr(0, k)) held = std::max(held, k);
    return held;
}

void check_contract(const std::vector<std::string>& strings, const std::vector<std::string>& pieces, bool include) {
    nexttok::stop_strings matcher(strings, include);
    std::string text;
    std::vector<nexttok::token_id> tokens;
    for (const std::string& piece : pieces) {
        text += piece;
        tokens.push_back(0);
        const nexttok::generation_state state{tokens, 0, text};
        const bool reported = matcher.check(state) == nexttok::finish_reason::stop_string;
        // Earliest start over all strings, then the longest at that start (the text held no match
        // before this step, so every occurrence is new).
        std::size_t best_begin = std::string::npos, best_end = 0;
        for (const std::string& s : strings) {
            const std::size_t pos = text.find(s);
            if (pos == std::string::npos) continue;
            if (pos < best_begin || (pos == best_begin && pos + s.size() > best_end)) {
                best_begin = pos;
                best_end = pos + s.size();
            }
        }
        if (reported != (best_begin != std::string::npos)) __builtin_trap();
        if (!reported) {
            if (matcher.hold_back(text) != brute_hold_back(text, strings)) __builtin_trap();
            continue;
        }
        const auto& m = matcher.last_match();
        if (!m || m->begin != best_begin || m->end != best_end) __builtin_trap();
        if (text.compare(m->begin, m->end - m->begin, strings[m->index]) != 0) __builtin_trap();
        if (matcher.text_cut() != (include ? m->end : m->begin)) __builtin_trap();
        matcher.reset();
        text.clear();
        tokens.clear();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::size_t n_strings = (data[0] & 3) + 1;
    const bool include = (data[0] & 4) != 0;
    std::vector<std::string> parts = split(nexttok::fuzz::as_chars(data + 1, size - 1));
    if (parts.size() <= n_strings) return 0;
    std::vector<std::string> strings(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(n_strings));
    std::vector<std::string> pieces(parts.begin() + static_cast<std::ptrdiff_t>(n_strings), parts.end());
    try {
        check_contract(strings, pieces, include);
    } catch (const nexttok::error&) {
        // Only the constructor throws: an empty stop string, or one that is not valid UTF-8.
        for (const std::string& s : strings)
            if (s.empty() || !nexttok::detail::is_valid_utf8(s)) return 0;
        __builtin_trap();
    }
    return 0;
}
