// Shared pieces of the concurrency tests: the models, reproducible prompts, bitwise comparison.
#pragma once

#include <nexttok/detail/splitmix64.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/types.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace nexttok::test {

inline constexpr const char* stories_gguf = "models/stories260K/stories260K.gguf";

// A small llama-layout model (GQA, two layers), the same for every call.
inline std::shared_ptr<const model> small_random_model() {
    model_config c;
    c.vocab_size = 320;
    c.dim = 64;
    c.hidden_dim = 172;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.max_seq_len = 256;
    return make_random_model(c, 4242);
}

// n tokens in [0, vocab_size), the same for the same seed.
inline std::vector<token_id> random_tokens(std::uint64_t seed, std::int64_t n, std::int64_t vocab_size) {
    std::vector<token_id> t;
    for (std::int64_t i = 0; i < n; ++i)
        t.push_back(static_cast<token_id>(detail::splitmix64_next(seed) % static_cast<std::uint64_t>(vocab_size)));
    return t;
}

// Equal bit for bit (NaN included), not just ==.
inline bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace nexttok::test
