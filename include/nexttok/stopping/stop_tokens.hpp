// Stops with finish_reason::stop_token when the newest generated token is one the caller listed (e.g.
// a chat template's end-of-turn marker that is not the model's EOS). Same rules as eos_criterion:
// prompt tokens never trigger it, negative ids are ignored, an empty set never fires.
#pragma once

#include <nexttok/stopping/detail/token_set.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/types.hpp>

#include <initializer_list>
#include <span>

namespace nexttok {

class stop_tokens {
public:
    explicit stop_tokens(std::span<const token_id> ids) : ids_(ids) {}
    stop_tokens(std::initializer_list<token_id> ids) : ids_({ids.begin(), ids.size()}) {}

    finish_reason check(const generation_state& state) const noexcept {
        return state.n_generated() > 0 && ids_.contains(state.tokens.back()) ? finish_reason::stop_token
                                                                             : finish_reason::none;
    }

    std::span<const token_id> ids() const noexcept { return ids_.ids(); }

private:
    detail::token_set ids_;
};

}  // namespace nexttok
