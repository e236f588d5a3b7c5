// Stops with finish_reason::eos when the newest generated token is one of the model's end-of-sequence
// ids (a model may have several: Llama 3 ends turns with <|eot_id|> and text with <|end_of_text|>).
// Prompt tokens never trigger it. Whether the EOS token is kept in the output is generate()'s choice.
#pragma once

#include <nexttok/stopping/detail/token_set.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/types.hpp>

#include <initializer_list>
#include <span>

namespace nexttok {

class eos_criterion {
public:
    // Negative ids (no_token) are ignored; an empty set never fires.
    explicit eos_criterion(std::span<const token_id> eos_ids) : ids_(eos_ids) {}
    eos_criterion(std::initializer_list<token_id> eos_ids) : ids_({eos_ids.begin(), eos_ids.size()}) {}

    finish_reason check(const generation_state& state) const noexcept {
        return state.n_generated() > 0 && ids_.contains(state.tokens.back()) ? finish_reason::eos : finish_reason::none;
    }

    std::span<const token_id> ids() const noexcept { return ids_.ids(); }

private:
    detail::token_set ids_;
};

}  // namespace nexttok
