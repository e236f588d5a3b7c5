// Everything generate() does for one sequence except the forward call: feeds the prompt to the
// sampler, samples from the logits it is given, records log-probabilities, detokenizes, checks the
// stopping criteria, streams the released text, and times the two phases. generate() is a short
// driver over it; a continuous-batching scheduler, which runs the forward passes of many sequences
// together, drives one generator per sequence and so applies exactly the same per-sequence logic:
//
//   sequence_generator gen(&tok, prompt, sample, stop, on_token, cache.capacity());
//   if (gen.start()) {
//       run the prompt at positions 0.. into `logits` (vocab_size, the last position's);
//       while (gen.next(logits)) run gen.sequence().back() at position gen.sequence().size() - 1 into `logits`;
//   }
//   generation_result r = gen.finish();
//
// next() returns true only when that position is inside the cache: the last token (the one drawn from
// the logits of position capacity - 1) ends generation with cache_full without being run, so a cache
// of C positions holds a prompt of P tokens and C - P + 1 generated ones, as llama2.c. With
// loop_settings::context_shift the driver makes room in the cache instead (generate.hpp) and the
// capacity ends nothing; positions then no longer equal indices into sequence().
//
// Streaming: the callback sees, per generated token, the text that became safe to show: whole UTF-8
// characters only (the detokenizer holds back an incomplete one), minus any suffix that could still
// turn into a stop string (the criteria's hold_back(), stopping/concepts.hpp). When a stop string
// completes, the text is cut before it and the held-back bytes that were its beginning are never
// shown. The concatenation of every event's text equals result.text, also when stop_with() ends
// generation (finish() releases what was held back).
//
// Ownership: refers to the tokenizer, the sampler, the criteria and the callback, which must outlive
// it; owns the sequence (prompt + generated) and the result under construction. Move-only: a copy
// would share the sampler's and the criteria's state. Not thread-safe: one thread at a time drives a
// generator; generators with their own samplers and criteria may run on different threads.
//
// Allocation: the constructor reserves the sequence and the result for the whole capacity (with
// context_shift: for settings.max_new_tokens, at most 2^20 tokens; beyond, they grow by doubling); next()
// allocates only the detokenizer's short strings and, with n_logprobs, that step's top list (and the
// top-n search's scratch of vocab_size entries once, on the first step).
#pragma once

#include <nexttok/detail/check_logits.hpp>
#include <nexttok/detail/loop_settings.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation/detail/logprobs.hpp>
#include <nexttok/generation/detail/text_release.hpp>
#include <nexttok/generation/generation_result.hpp>
#include <nexttok/generation/token_event.hpp>
#include <nexttok/sampling/concepts.hpp>
#include <nexttok/stopping/concepts.hpp>
#include <nexttok/stopping/finish_reason.hpp>
#include <nexttok/stopping/generation_state.hpp>
#include <nexttok/tokenizer/detokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nexttok {

template <sampler Sampler, stopping_criterion Stop>
class sequence_generator {
public:
    // tok: null for tokens and log-probabilities only (the text stays empty). prompt: copied, BOS
    // included if the model wants one. capacity: the positions of the cache the sequence lives in;
    // next() ends with cache_full when the new token's position would be past them (unless
    // settings.context_shift). settings: copied. Throws
    // invalid_argument_error for an empty prompt or one longer than capacity.
    sequence_generator(const tokenizer* tok, std::span<const token_id> prompt, Sampler& sample, Stop& stop,
                       const token_callback& on_token, std::int64_t capacity,
                       const detail::loop_settings& settings = {})
            : sample_(&sample),
              stop_(&stop),
              on_token_(&on_token),
              capacity_(capacity),
              settings_(settings),
              n_prompt_(static_cast<std::int64_t>(prompt.size())) {
        detail::check_prompt(prompt.size(), capacity, "sequence_generator");
        const auto max_steps = static_cast<std::size_t>(reserved_steps_(capacity, n_prompt_, settings_));
        result_.tokens.reserve(max_steps);
        result_.logprobs.reserve(max_steps);
        result_.processed_logprobs.reserve(max_steps);
        if (settings_.n_logprobs > 0) result_.top_logprobs.reserve(max_steps);
        sequence_.reserve(static_cast<std::size_t>(n_prompt_) + max_steps);
        sequence_.assign(prompt.begin(), prompt.end());
        result_.timings.n_prompt_tokens = n_prompt_;
        if (tok != nullptr) {
            detok_.emplace(*tok);
            detok_->prime(prompt);
        }
    }

    // The callback is referenced: a temporary (a lambda converted on the spot, `{}`) would dangle.
    sequence_generator(const tokenizer*, std::span<const token_id>, Sampler&, Stop&, token_callback&&, std::int64_t,
                       const detail::loop_settings& = {}) = delete;

    sequence_generator(const sequence_generator&) = delete;
    sequence_generator& operator=(const sequence_generator&) = delete;
    sequence_generator(sequence_generator&&) = default;
    sequence_generator& operator=(sequence_generator&&) = default;

    // stop.reset(), sample.accept() of each prompt token, and the first stop.check() (so that e.g.
    // max_new_tokens(0) generates nothing). True when the caller must run the prompt and call
    // next() with the logits of its last position; false when generation already ended (reason()
    // says why, also when stop_with() came first). Call once.
    bool start() {
        assert(!started_ && "start() is called once");
        started_ = true;
        if (result_.reason != finish_reason::none) return false;
        detail::reset_criterion_if_supported(*stop_);
        for (const token_id t : sequence_) sample_->accept(t);
        result_.reason = stop_->check(state_());
        t0_ = clock::now();
        return result_.reason == finish_reason::none;
    }

    // logits (vocab_size): the model's output for the position after sequence().back(). Samples the
    // next token, records its log-probabilities, detokenizes, checks the criteria, cuts the text at a
    // stop string and streams what became safe to show. True when the caller must run
    // sequence().back() at position sequence().size() - 1 and call next() again; false when
    // generation ended (reason(): a criterion's, callback when on_token returned false, cache_full
    // when the token's position would be past the capacity: it is the last, not run). Precondition:
    // start() returned true, not finished(). Throws nexttok::error naming the position when the
    // logits hold a NaN or an infinity (detail/check_logits.hpp), before sampling.
    bool next(std::span<const float> logits) {
        assert(started_ && !finished() && !logits.empty());
        detail::check_logits(logits, static_cast<std::int64_t>(sequence_.size()) - 1);
        return next_token(sample_->sample(logits), logits);
    }

    // next() with the token chosen by the caller instead of sampled here (speculative decoding, whose
    // verification draws it from the sampler's distribution and ends the sampler's step with choose()):
    // records `id` with its log-probabilities (sample.last_logprob() must be id's, as after choose()),
    // detokenizes, checks the criteria, streams, and returns as next() does. Precondition as next(),
    // and 0 <= id < logits.size().
    bool next_token(token_id id, std::span<const float> logits) {
        assert(started_ && !finished() && !logits.empty());
        assert(id >= 0 && static_cast<std::size_t>(id) < logits.size());
        record_(id, logits);
        if (detok_) result_.text += detok_->push(id);
        time_step_();

        result_.reason = stop_->check(state_());
        if (result_.reason != finish_reason::none) cut_text_();
        stream_(id);
        // The token just drawn came from the logits of position sequence().size() - 2; it needs position
        // sequence().size() - 1 to be run. When that is past the cache, it is the last one (as llama2.c,
        // whose last token comes from the last position's logits and is never run).
        if (result_.reason == finish_reason::none && !settings_.context_shift &&
            static_cast<std::int64_t>(sequence_.size()) > capacity_)
            result_.reason = finish_reason::cache_full;
        if (result_.reason == finish_reason::none) return true;
        end_timing_();
        return false;
    }

    // Ends generation from outside (cancelled; cache_full when a scheduler cannot keep the sequence):
    // the reason is recorded unless one already is. finish() still flushes and streams the held-back
    // text. Throws invalid_argument_error for finish_reason::none.
    void stop_with(finish_reason why) {
        if (why == finish_reason::none)
            throw invalid_argument_error("sequence_generator::stop_with: finish_reason::none ends nothing");
        if (result_.reason != finish_reason::none) return;
        result_.reason = why;
        end_timing_();
    }

    // Ends generation with finish_reason::error and `message` in the result (a scheduler's request
    // whose next() threw), unless it already ended.
    void fail(std::string message) {
        if (result_.reason != finish_reason::none) return;
        result_.error = std::move(message);
        stop_with(finish_reason::error);
    }

    // Prompt + generated, newest last; next() appends one id. Its storage never moves (reserved for
    // capacity + 1; with context_shift, only while it fits the reservation), so a view of it stays
    // valid as long as the generator.
    const std::vector<token_id>& sequence() const noexcept { return sequence_; }
    std::int64_t n_prompt() const noexcept { return n_prompt_; }
    std::int64_t n_generated() const noexcept { return static_cast<std::int64_t>(result_.tokens.size()); }
    finish_reason reason() const noexcept { return result_.reason; }
    bool finished() const noexcept { return result_.reason != finish_reason::none; }

    // The result: flushes the detokenizer (its held-back bytes follow the text, unless a stop string
    // cut it) and streams the still held-back text in a final event with id == no_token. Timings:
    // prefill from start() to the first token; decode from there to the moment generation ended;
    // n_decode_steps counts the logits given to next() after the first (the forward calls after the
    // prefill). Precondition: finished(). Call once: the generator is spent afterwards.
    generation_result finish() {
        assert(finished() && !finish_called_ && "finish() is called once, after generation ended");
        finish_called_ = true;
        if (detok_) {
            const std::string rest = detok_->flush();
            if (!cut_) result_.text += rest;
        }
        const std::string_view released = shown_.release_all(result_.text);
        if (!released.empty() && *on_token_)
            (*on_token_)(token_event{no_token, released, 0.0f, n_generated(), {}, settings_.sample_index});
        return std::move(result_);
    }

private:
    using clock = std::chrono::steady_clock;

    // Tokens generated at most: capacity - n_prompt + 1, or with context shift (no capacity bound)
    // max_new_tokens (capped at 2^20 for the reservation; -1: as without context shift).
    static std::int64_t reserved_steps_(std::int64_t capacity, std::int64_t n_prompt,
                                        const detail::loop_settings& s) noexcept {
        const std::int64_t in_cache = capacity - n_prompt + 1;
        if (!s.context_shift || s.max_new_tokens < 0) return in_cache;
        return std::max(in_cache, std::min<std::int64_t>(s.max_new_tokens, std::int64_t{1} << 20));
    }

    generation_state state_() const noexcept {
        return generation_state{sequence_, static_cast<std::size_t>(n_prompt_), result_.text};
    }

    // Appends the sampled token and its log-probabilities under the model and under the sampler.
    void record_(token_id id, std::span<const float> logits) {
        const double lse = detail::log_sum_exp(logits);
        sequence_.push_back(id);
        result_.tokens.push_back(id);
        result_.logprobs.push_back(static_cast<float>(static_cast<double>(logits[static_cast<std::size_t>(id)]) - lse));
        result_.processed_logprobs.push_back(static_cast<float>(sample_->last_logprob()));
        if (settings_.n_logprobs > 0) {
            result_.top_logprobs.emplace_back();
            detail::top_logprobs(logits, lse, static_cast<std::size_t>(settings_.n_logprobs), order_,
                                 result_.top_logprobs.back());
        }
    }

    // The first token closes the prefill (the shared one's time with prefilled_logits); every later
    // one is a decode step.
    void time_step_() {
        if (prefill_timed_) {
            ++result_.timings.n_decode_steps;
            return;
        }
        result_.timings.prefill_seconds = settings_.prefilled_logits != nullptr
                                              ? settings_.prefill_seconds
                                              : std::chrono::duration<double>(clock::now() - t0_).count();
        prefill_timed_ = true;
        t0_ = clock::now();
    }

    void end_timing_() {
        if (prefill_timed_) result_.timings.decode_seconds = std::chrono::duration<double>(clock::now() - t0_).count();
    }

    // After a criterion ended generation: the text a stop string criterion asks for.
    void cut_text_() {
        if (const auto at = detail::text_cut_if_supported(*stop_); at && *at <= result_.text.size()) {
            result_.text.resize(*at);
            cut_ = true;
        }
    }

    // Streams token `id` with the text that became safe to show (all of it once generation ended);
    // a callback returning false ends generation unless a criterion already did.
    void stream_(token_id id) {
        const std::string_view released =
            result_.reason != finish_reason::none
                ? shown_.release_all(result_.text)
                : shown_.release(result_.text, detail::hold_back_if_supported(*stop_, std::string_view(result_.text)));
        if (!*on_token_) return;
        const std::span<const token_logprob> top = settings_.n_logprobs > 0
                                                       ? std::span<const token_logprob>(result_.top_logprobs.back())
                                                       : std::span<const token_logprob>();
        const bool go_on = (*on_token_)(
            token_event{id, released, result_.logprobs.back(), n_generated() - 1, top, settings_.sample_index});
        if (!go_on && result_.reason == finish_reason::none) result_.reason = finish_reason::callback;
    }

    Sampler* sample_;                 // non-owning
    Stop* stop_;                      // non-owning
    const token_callback* on_token_;  // non-owning; may hold no target
    std::int64_t capacity_;
    detail::loop_settings settings_;
    std::int64_t n_prompt_;
    std::vector<token_id> sequence_;    // (n_prompt + n_generated) ids, reserved for n_prompt + reserved_steps_
    generation_result result_;          // built in place, moved out by finish()
    std::optional<detokenizer> detok_;  // absent without a tokenizer
    detail::text_release shown_;        // how much of result_.text the callback has seen
    std::vector<std::uint32_t> order_;  // scratch of the top-n search (vocab_size entries)
    clock::time_point t0_{};            // start of the phase being timed
    bool cut_ = false;                  // a stop string cut result_.text: the detokenizer's rest is dropped
    bool prefill_timed_ = false;
    bool started_ = false;
    bool finish_called_ = false;
};

}  // namespace nexttok
