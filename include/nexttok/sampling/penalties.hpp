// Repetition, frequency and presence penalties over a window of recent tokens, as llama.cpp's
// "penalties" sampler (llama_sampler_penalties), which combines:
//   - the repetition penalty of CTRL (Keskar et al. 2019, "CTRL: A Conditional Transformer Language
//     Model for Controllable Generation") with the sign fix every engine uses: a token seen in the
//     window has its logit divided by `repeat` when positive and multiplied by it when <= 0, once
//     whatever its count (llama.cpp and Hugging Face's RepetitionPenaltyLogitsProcessor agree; at 0
//     both rules give 0);
//   - the frequency and presence penalties of OpenAI's API: logit -= count * frequency +
//     (count > 0) * presence, count = occurrences in the window. Negative values encourage repetition.
// The repetition rule is applied first, then the subtraction, in float (as llama.cpp).
//
// Which tokens count (the engines disagree; our choices):
//   - Window: the last `last_n` tokens accepted (llama.cpp's penalty_last_n, default 64); -1 means
//     every accepted token (Hugging Face penalizes the whole context, no window); 0 disables the stage.
//   - Prompt: a token accepted before the first apply() since construction or reset() is a prompt
//     token (generate() feeds the prompt through accept() before sampling). With include_prompt = true
//     (the default) prompt tokens count, as in llama.cpp's CLI and server and in Hugging Face's
//     default; with false only generated tokens do (HF's prompt_ignore_length).
//
// No-op when repeat == 1, frequency == 0 and presence == 0. Clears `sorted` and probs_valid when a
// logit changes. Memory: one int per vocabulary entry (sized at the first apply) and the window
// (allocated at construction), so neither accept() nor apply() allocates after the first draw.
// Copyable; not thread-safe.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/sampling/candidates.hpp>
#include <nexttok/sampling/detail/token_history.hpp>
#include <nexttok/types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nexttok {

class penalties {
public:
    // Throws invalid_argument_error for last_n < -1, repeat <= 0 or not finite, a NaN or infinite
    // frequency or presence.
    NEXTTOK_DECL penalties(std::int32_t last_n, float repeat, float frequency, float presence,
                           bool include_prompt = true);

    bool enabled() const noexcept {
        return last_n_ != 0 && (repeat_ != 1.0f || frequency_ != 0.0f || presence_ != 0.0f);
    }

    NEXTTOK_DECL void apply(candidates& c);

    void accept(token_id t) {
        if (last_n_ == 0 || t < 0 || (in_prompt_ && !include_prompt_)) return;
        const auto id = static_cast<std::size_t>(t);
        if (id >= counts_.size()) counts_.resize(id + 1, 0);
        ++counts_[id];
        ++n_counted_;
        if (last_n_ > 0) {
            const token_id evicted = window_.push(t);
            if (evicted != no_token) {
                --counts_[static_cast<std::size_t>(evicted)];
                --n_counted_;
            }
        }
    }

    NEXTTOK_DECL void reset();

    // Occurrences of `t` in the window (0 for an id never seen).
    std::int32_t count(token_id t) const noexcept {
        const auto id = static_cast<std::size_t>(t);
        return t >= 0 && id < counts_.size() ? counts_[id] : 0;
    }

    std::int32_t last_n() const noexcept { return last_n_; }
    float repeat() const noexcept { return repeat_; }
    float frequency() const noexcept { return frequency_; }
    float presence() const noexcept { return presence_; }
    bool include_prompt() const noexcept { return include_prompt_; }

private:
    std::int32_t last_n_;
    float repeat_, frequency_, presence_;
    bool include_prompt_;
    bool in_prompt_ = true;             // no apply() yet since construction or reset()
    detail::token_history window_;      // (last_n) the counted tokens, when last_n > 0
    std::vector<std::int32_t> counts_;  // (largest id counted + 1) occurrences in the window
    std::int64_t n_counted_ = 0;        // tokens in the window
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/penalties.ipp>
#endif
