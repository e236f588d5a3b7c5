// Stops with finish_reason::stop_string when the generated text contains one of the stop strings.
// The text is the decoded text (state.text), so a stop string is found whatever the tokens that spell
// it: split over two or three tokens, or inside one, or a multi-byte character completed by the
// last of several byte-fallback tokens (the detokenizer only ever appends whole characters).
//
// Matching: each check() reports only new matches, those that end in the text appended since the
// previous check, searching from the last (longest - 1) bytes of the previous text with
// std::string_view::find, which finds overlapping candidates ("aab" in "aaab" at offset 1). Among
// several matches the earliest start wins, then the longer string, then the first listed. The text must only grow between checks; a shorter text is a
// new generation and is scanned from the start (reset() does the same).
//
// Streaming: hold_back(text) is the length of the longest suffix of text that is a proper prefix of a
// stop string: generate() keeps those bytes from the user until they either complete a stop string
// (then they are never shown) or stop being a possible start. text_cut() gives the length the text is
// cut to after a match: the start of the stop string (it is not returned), or its end when
// include_stop_string (as llama.cpp's server, which drops it, and HF, whose StopStringCriteria keeps
// it; text after the stop string in the same token is dropped either way). Stop strings must be valid
// UTF-8: then a match always starts on a character boundary (UTF-8 is self-synchronizing), and the cut
// never splits a character.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

class stop_strings {
public:
    struct match {
        std::size_t index = 0;  // which stop string, in the order given
        std::size_t begin = 0;  // [begin, end): its bytes in the generated text
        std::size_t end = 0;
    };

    // Throws invalid_argument_error for an empty stop string (it would match everywhere) or one that is
    // not valid UTF-8 (the decoded text always is, so it could only match inside a character).
    NEXTTOK_DECL explicit stop_strings(std::vector<std::string> strings, bool include_stop_string = false);

    NEXTTOK_DECL finish_reason check(const generation_state& state);

    // Trailing bytes of `text` that are a proper prefix of some stop string (0 when none).
    NEXTTOK_DECL std::size_t hold_back(std::string_view text) const noexcept;

    std::optional<std::size_t> text_cut() const noexcept {
        if (!last_) return std::nullopt;
        return include_ ? last_->end : last_->begin;
    }

    // The match found by the last check(), if any.
    const std::optional<match>& last_match() const noexcept { return last_; }
    const std::vector<std::string>& strings() const noexcept { return strings_; }
    bool include_stop_string() const noexcept { return include_; }

    void reset() noexcept {
        scanned_ = 0;
        last_.reset();
    }

private:
    std::vector<std::string> strings_;
    bool include_;
    std::size_t longest_ = 0;
    std::size_t scanned_ = 0;  // text length at the previous check
    std::optional<match> last_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/stopping/impl/stop_strings.ipp>
#endif
