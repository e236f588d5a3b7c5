// What part of the generated text the streaming callback may see now. The text only ever holds whole
// UTF-8 characters (the detokenizer's guarantee); a stopping criterion may ask to hold back a suffix
// that could still become a stop string (concepts.hpp). The released part never shrinks: a cut text
// (a stop string matched) never goes below what was released, because what could start a match was
// held back. Internal to generate().
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>

namespace nexttok::detail {

class text_release {
public:
    // The text newly safe to show: from the last release up to text.size() - hold, moved back to the
    // start of a character if hold ends inside one.
    std::string_view release(const std::string& text, std::size_t hold) {
        std::size_t end = text.size() - std::min(hold, text.size());
        while (end > released_ && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
        return take_(text, end);
    }

    // Everything not released yet (generation ended).
    std::string_view release_all(const std::string& text) { return take_(text, text.size()); }

    std::size_t released() const noexcept { return released_; }

private:
    std::string_view take_(const std::string& text, std::size_t end) {
        assert(released_ <= text.size() && "a cut never reaches into released text");
        const std::size_t from = std::min(released_, text.size());
        if (end <= from) return {};
        released_ = end;
        return std::string_view(text).substr(from, end - from);
    }

    std::size_t released_ = 0;
};

}  // namespace nexttok::detail
