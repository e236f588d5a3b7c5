// The check every sampling loop makes on a row of logits before it samples from it (generate(),
// generate_n, the scheduler, speculative decoding, score()): a NaN or an infinity means the model
// computed non-finite numbers (NaN or inf weights, or an overflow), and sampling from such a row
// draws a meaningless token, silently. One pass over vocab_size floats, tested on bit patterns
// (vectorized), per sampled row: nothing next to the forward pass that made it. Internal.
#pragma once

#include <nexttok/error.hpp>

#include <bit>
#include <cstdint>
#include <span>
#include <string>

namespace nexttok::detail {

// Throws nexttok::error naming `who`, the position whose output the row is, the first token whose
// logit is non-finite and what it holds (NaN, inf, -inf).
inline void check_logits(std::span<const float> logits, std::int64_t position, const char* who = "generation") {
    constexpr std::uint32_t exponent = 0x7f800000u;
    unsigned bad = 0;
    for (const float v : logits) bad |= static_cast<unsigned>((std::bit_cast<std::uint32_t>(v) & exponent) == exponent);
    if (bad == 0) return;
    std::size_t i = 0;
    while ((std::bit_cast<std::uint32_t>(logits[i]) & exponent) != exponent) ++i;
    const float v = logits[i];
    const char* what = v != v ? "NaN" : v > 0 ? "inf" : "-inf";
    throw error(std::string(who) + ": the logits at position " + std::to_string(position) + " hold " + what +
                " (token " + std::to_string(i) +
                "); the model produced non-finite numbers (check its weights: --check-tensors)");
}

}  // namespace nexttok::detail
