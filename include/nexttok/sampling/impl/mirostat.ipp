// The definitions of mirostat.hpp.
#pragma once

#include <nexttok/sampling/mirostat.hpp>
#include <nexttok/sampling/detail/draw.hpp>
#include <nexttok/sampling/detail/validate.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace nexttok {

NEXTTOK_DECL mirostat::mirostat(float tau, float eta, std::uint64_t seed, std::int32_t m, std::int64_t n_vocab)
        : tau_(tau), eta_(eta), m_(m), n_vocab_(n_vocab), seed_(seed), mu_(2.0f * tau), rng_(seed) {
    detail::require_not_nan(tau, "mirostat", "tau");
    detail::require_not_nan(eta, "mirostat", "eta");
    if (m < 1) throw invalid_argument_error("mirostat: m must be >= 1");
}

NEXTTOK_DECL token_id mirostat::select(candidates& c) {
    if (c.empty()) return no_token;
    c.sort();
    c.softmax();
    float sum_tb = 0.0f, sum_tt = 0.0f;
    for (std::size_t i = 0; i + 1 < static_cast<std::size_t>(m_) && i + 1 < c.size(); ++i) {
        const float t = std::log(static_cast<float>(i + 2) / static_cast<float>(i + 1));
        const float b = std::log(c.probs[i] / c.probs[i + 1]);
        sum_tb += t * b;
        sum_tt += t * t;
    }
    const float s_hat = sum_tb / sum_tt;
    const float eps_hat = s_hat - 1.0f;
    const auto n_vocab = static_cast<float>(n_vocab_ > 0 ? n_vocab_ : static_cast<std::int64_t>(c.size()));
    const float k = std::pow(eps_hat * std::pow(2.0f, mu_) / (1.0f - std::pow(n_vocab, -eps_hat)), 1.0f / s_hat);
    std::size_t n_keep = c.size();
    if (std::isfinite(k) && k < static_cast<float>(c.size()))
        n_keep = std::max<std::size_t>(static_cast<std::size_t>(std::max(k, 0.0f)), 1);
    last_k_ = n_keep;
    c.keep_top(n_keep);
    const std::size_t pos = c.size() == 1 ? 0 : detail::draw_position(c, rng_);
    if (c.size() == 1) {
        c.probs[0] = 1.0f;
        c.probs_valid = true;
    }
    mu_ -= eta_ * (-std::log2(c.probs[pos]) - tau_);
    return c.ids[pos];
}

}  // namespace nexttok
