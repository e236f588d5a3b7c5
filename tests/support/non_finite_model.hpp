// A model that computes NaN at a known position: the random tiny-f32.gguf (untied classifier) with
// one value of token T's embedding row made NaN, loaded with tensor_check::never. Feeding T makes
// that position's logits (and every later one's, through attention) NaN, while positions before it
// are exactly the healthy model's. So greedy generation follows the healthy model until it feeds
// T: choosing T as the k-th greedy token (k >= 1, not seen before) puts the first NaN logits at
// position n_prompt + k, the oracle of the non-finite-logits tests.
#pragma once

#include "file_patch.hpp"
#include "test_data.hpp"

#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/stopping.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nexttok::test {

inline const char* const non_finite_source = "models/random/tiny-f32.gguf";

// Greedy tokens of `m` after `prompt`, n of them.
inline std::vector<token_id> greedy_tokens(const std::shared_ptr<const model>& m, const std::vector<token_id>& prompt,
                                           std::int64_t n) {
    decoder<float> dec(m);
    kv_cache<float> cache(m->config(), 128);
    auto sampler = make_sampler_chain(greedy{});
    max_new_tokens stop(n);
    return generate(dec, cache, prompt, sampler, stop).tokens;
}

struct non_finite_case {
    std::shared_ptr<const model> healthy, broken;
    std::vector<token_id> prompt;
    std::vector<token_id> healthy_tokens;  // greedy, 16 tokens
    std::int64_t k = -1;                   // broken's first NaN logits are at position prompt.size() + k
    token_id poisoned = no_token;          // healthy_tokens[k], whose embedding holds a NaN
};

// Fails the calling test (returns k = -1) when the healthy greedy run repeats itself at once.
inline non_finite_case make_non_finite_case(const temp_dir& dir, std::vector<token_id> prompt = {1, 17, 42}) {
    non_finite_case c;
    const auto source = data_path(non_finite_source);
    c.healthy = load_model(source);
    c.prompt = std::move(prompt);
    c.healthy_tokens = greedy_tokens(c.healthy, c.prompt, 16);
    for (std::int64_t k = 1; k + 1 < static_cast<std::int64_t>(c.healthy_tokens.size()); ++k) {
        const token_id t = c.healthy_tokens[static_cast<std::size_t>(k)];
        const bool seen =
            std::find(c.prompt.begin(), c.prompt.end(), t) != c.prompt.end() ||
            std::find(c.healthy_tokens.begin(), c.healthy_tokens.begin() + k, t) != c.healthy_tokens.begin() + k;
        if (!seen) {
            c.k = k;
            c.poisoned = t;
            break;
        }
    }
    EXPECT_GE(c.k, 0) << "the healthy greedy run has no fresh token to poison";
    if (c.k < 0) return c;
    std::uint64_t row_offset = 0;
    {
        gguf_file g(source);
        const tensor_view* e = g.find_tensor("token_embd.weight");
        row_offset = e->file_offset + static_cast<std::uint64_t>(c.poisoned) * e->row_bytes();
    }
    bytes b = read_bytes(source);
    put<std::uint32_t>(b, row_offset + 4 * 5, 0x7fc00000u);  // element 5 of the row: NaN
    c.broken = load_model(dir.write("nan-embedding.gguf", b), load_options{.check_tensors = tensor_check::never});
    return c;
}

inline std::string nan_position_message(std::int64_t position) {
    return "the logits at position " + std::to_string(position) + " hold NaN";
}

}  // namespace nexttok::test
