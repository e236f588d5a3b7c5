// Context shift, as llama.cpp's --context-shift does it: when the cache is full and one more token
// must run, the first n_keep positions stay, the next n_discard = (n_past - n_keep) / 2 are dropped,
// and the later ones move down by n_discard with their keys re-rotated to their new positions
// (decoder::shift_context). The model then sees the kept tokens (the beginning of the prompt) and the
// most recent half of the rest. The entries that move keep the values computed when the dropped
// tokens were still in view: a shifted cache is not what a fresh prefill of the same tokens gives
// (except in layer 0), which is why llama.cpp's output after a shift also differs from a restart.
//
// llama.cpp (tools/main) shifts when n_past + 1 >= n_ctx, leaving the last position unused; here the
// shift comes when the cache holds all its positions and a token needs one more (generate() uses every
// position, see sequence_generator.hpp), so n_past = capacity at each shift.
#pragma once

#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/generation_options.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/types.hpp>

#include <cstdint>
#include <span>
#include <string>

namespace nexttok::detail {

// The positions a shift keeps for generation_options::keep over `prompt`: keep prompt tokens, plus
// BOS when the prompt starts with it (llama.cpp adds 1 when the vocabulary adds BOS); -1, or more
// than the prompt holds: the whole prompt.
inline std::int64_t kept_positions(std::int64_t keep, std::span<const token_id> prompt, token_id bos) {
    const auto n_prompt = static_cast<std::int64_t>(prompt.size());
    const std::int64_t n_bos = !prompt.empty() && bos >= 0 && prompt.front() == bos ? 1 : 0;
    if (keep < 0 || keep + n_bos > n_prompt) return n_prompt;
    return keep + n_bos;
}

// The loop settings of a generation with options' context shift over `prompt`.
inline void set_context_shift(loop_settings& settings, const generation_options& options,
                              std::span<const token_id> prompt, token_id bos) {
    settings.context_shift = options.context_shift;
    settings.max_new_tokens = options.max_new_tokens;
    settings.n_keep = options.context_shift ? kept_positions(options.keep, prompt, bos) : 0;
}

template <class Decoder, class Cache>
concept context_shifting = requires(const Decoder& dec, Cache& cache, std::int64_t n) {
    dec.shift_context(cache, n, n);
};

// Before the loop: throws invalid_argument_error when the cache recomputes everything (no_cache) or
// the kept positions leave fewer than 2 to drop, unsupported_error when the decoder cannot shift this
// cache or the model's positions are learned (GPT-2: no rotation moves a key to another position).
template <class Decoder, class Cache>
void check_context_shift(const Decoder& dec, const loop_settings& settings, std::int64_t capacity, const char* who) {
    if (!settings.context_shift) return;
    if constexpr (!Cache::retains_history) {
        throw invalid_argument_error(std::string(who) +
                                     ": context_shift needs a KV cache that keeps history (no_cache "
                                     "recomputes the whole sequence at every step)");
    } else if constexpr (!context_shifting<Decoder, Cache>) {
        throw unsupported_error(std::string(who) +
                                ": context_shift: this decoder cannot shift the context of this cache type "
                                "(expected decoder::shift_context for it)");
    } else {
        if constexpr (requires { dec.config().positions; })
            if (dec.config().positions == position_kind::learned)
                throw unsupported_error(std::string(who) +
                                        ": context_shift: the model has learned position embeddings, "
                                        "whose cached keys cannot be moved to other positions");
        if (settings.n_keep > capacity - 2)
            throw invalid_argument_error(std::string(who) + ": context_shift keeps " + std::to_string(settings.n_keep) +
                                         " positions of a cache of " + std::to_string(capacity) +
                                         ": at least 2 must be left to drop (expected keep <= " +
                                         std::to_string(capacity - 2) + ", BOS counted)");
    }
}

// The shift of a full cache (n_past = cache.size() positions): returns the positions dropped.
template <class Decoder, class Cache>
requires context_shifting<Decoder, Cache> std::int64_t shift_context(const Decoder& dec, Cache& cache,
                                                                     std::int64_t n_keep) {
    const std::int64_t n_discard = (cache.size() - n_keep) / 2;
    dec.shift_context(cache, n_keep, n_discard);
    return n_discard;
}

}  // namespace nexttok::detail
