// The definitions of detail/logprobs.hpp.
#pragma once

#include <nexttok/generation/detail/logprobs.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace nexttok::detail {

NEXTTOK_DECL double log_sum_exp(std::span<const float> logits) noexcept {
    const float max = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
    return max + std::log(sum);
}

NEXTTOK_DECL void top_logprobs(std::span<const float> logits, double lse, std::size_t n,
                               std::vector<std::uint32_t>& order, std::vector<token_logprob>& out) {
    n = std::min(n, logits.size());
    order.resize(logits.size());
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    auto before = [&](std::uint32_t a, std::uint32_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    };
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), before);
    out.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = {static_cast<token_id>(order[i]), static_cast<float>(static_cast<double>(logits[order[i]]) - lse)};
}

}  // namespace nexttok::detail
