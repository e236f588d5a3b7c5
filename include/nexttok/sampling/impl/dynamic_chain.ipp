// The definitions of dynamic_chain.hpp.
#pragma once

#include <nexttok/sampling/dynamic_chain.hpp>

#include <cassert>
#include <span>

namespace nexttok {

NEXTTOK_DECL void dynamic_chain::apply(candidates& c) {
    for (auto& p : processors_) p.apply(c);
}

NEXTTOK_DECL token_id dynamic_chain::sample(std::span<const float> logits) {
    const token_id token = selector_.select(last_.process(
        logits, [this](candidates& c) { apply(c); }, "dynamic_chain", "sample"));
    assert(token != no_token && "a selector must pick a token of a non-empty set");
    last_.chose(token);
    accept(token);
    return token;
}

NEXTTOK_DECL bool dynamic_chain::draws_random_numbers() const noexcept {
    for (const auto& p : processors_)
        if (p.draws_random_numbers()) return true;
    return false;
}

NEXTTOK_DECL token_distribution dynamic_chain::distribution(std::span<const float> logits) {
    if (!selector_.has_distribution())
        throw unsupported_error(
            "dynamic_chain::distribution: the selector has no distribution that can be stated without drawing "
            "(e.g. mirostat)");
    return selector_.distribution(last_.process(
        logits, [this](candidates& c) { apply(c); }, "dynamic_chain", "distribution", draws_random_numbers()));
}

NEXTTOK_DECL void dynamic_chain::accept(token_id token) {
    for (auto& p : processors_) p.accept(token);
    selector_.accept(token);
}

NEXTTOK_DECL void dynamic_chain::reset() {
    for (auto& p : processors_) p.reset();
    selector_.reset();
    last_.reset();
}

}  // namespace nexttok
