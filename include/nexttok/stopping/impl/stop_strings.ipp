// The definitions of stop_strings.hpp: the matching.
#pragma once

#include <nexttok/stopping/stop_strings.hpp>
#include <nexttok/detail/utf8.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

NEXTTOK_DECL stop_strings::stop_strings(std::vector<std::string> strings, bool include_stop_string)
        : strings_(std::move(strings)), include_(include_stop_string) {
    for (const auto& s : strings_) {
        if (s.empty()) throw invalid_argument_error("stop_strings: an empty stop string");
        if (!detail::is_valid_utf8(s)) throw invalid_argument_error("stop_strings: a stop string is not valid UTF-8");
        longest_ = std::max(longest_, s.size());
    }
}

NEXTTOK_DECL finish_reason stop_strings::check(const generation_state& state) {
    const std::string_view text = state.text;
    if (text.size() < scanned_) scanned_ = 0;
    const std::size_t previous = scanned_;
    const std::size_t from = previous >= longest_ ? previous - (longest_ - 1) : 0;
    scanned_ = text.size();
    last_.reset();
    for (std::size_t i = 0; i < strings_.size(); ++i) {
        const std::string_view s = strings_[i];
        std::size_t pos = text.find(s, from);
        // A match that ended within the previous text was reported (or passed over) before.
        while (pos != std::string_view::npos && pos + s.size() <= previous) pos = text.find(s, pos + 1);
        if (pos == std::string_view::npos) continue;
        const match m{i, pos, pos + s.size()};
        if (!last_ || m.begin < last_->begin || (m.begin == last_->begin && m.end > last_->end)) last_ = m;
    }
    return last_ ? finish_reason::stop_string : finish_reason::none;
}

NEXTTOK_DECL std::size_t stop_strings::hold_back(std::string_view text) const noexcept {
    std::size_t held = 0;
    for (const auto& s : strings_) {
        for (std::size_t k = std::min(s.size() - 1, text.size()); k > held; --k) {
            if (text.substr(text.size() - k) == std::string_view(s).substr(0, k)) {
                held = k;
                break;
            }
        }
    }
    return held;
}

}  // namespace nexttok
