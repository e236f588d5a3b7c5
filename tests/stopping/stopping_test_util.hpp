// Helpers shared by the stopping tests.
#pragma once

#include <nexttok/stopping/generation_state.hpp>

#include <string_view>
#include <vector>

namespace nexttok::test {

// The state a criterion sees after `tokens`, of which the first n_prompt are the prompt.
inline generation_state state_of(const std::vector<token_id>& tokens, std::size_t n_prompt,
                                 std::string_view text = {}) {
    return generation_state{tokens, n_prompt, text};
}

}  // namespace nexttok::test
