// Helpers of the generation tests: a hand-made vocabulary (control tokens, all 256 byte-fallback
// tokens, a few text pieces) and a scripted decoder that makes greedy decoding produce a given token
// sequence, so that the streaming and stopping logic of generate() is tested on exact text; and a
// wrapper that counts what a real decoder is asked to run.
#pragma once

#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/tokenizer/spm_tokenizer.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace nexttok::test {

inline constexpr token_id bos_id = 1;
inline constexpr token_id eos_id = 2;

// ids: 0 <unk>, 1 <s>, 2 </s>, 3 + b: the byte token <0xbb>, then the pieces below in order.
inline tokenizer scripted_tokenizer() {
    std::vector<token_data> t{
        {"<unk>", 0.0f, token_type::unknown}, {"<s>", 0.0f, token_type::control}, {"</s>", 0.0f, token_type::control}};
    for (int b = 0; b < 256; ++b) {
        char text[8];
        std::snprintf(text, sizeof text, "<0x%02X>", b);
        t.push_back({text, 0.0f, token_type::byte});
    }
    for (const char* p :
         {"a", "b", "c", "aa", "ab", "S", "TO", "P", "ST", "OP", "x", "y", "z", " ", "END", "E", "ND", "Hello", "."})
        t.push_back({p, -1.0f, token_type::normal});
    return tokenizer(
        spm_tokenizer(vocabulary(std::move(t), {.bos = bos_id, .eos = eos_id, .unk = 0}), {.add_space_prefix = false}));
}

inline token_id piece(const tokenizer& tok, const char* text) { return tok.vocab().find(text); }
inline token_id byte_token(const tokenizer& tok, unsigned char b) { return tok.vocab().byte_token(b); }

// A stand-in for decoder<float>: after a prompt of n_prompt tokens, greedy decoding produces
// script[0], script[1], ..., then EOS. Each logits row is 0 except 10 at the scripted token.
class scripted_decoder {
public:
    using scalar_type = float;

    scripted_decoder(std::int64_t vocab_size, std::size_t n_prompt, std::vector<token_id> script)
            : n_prompt_(n_prompt), script_(std::move(script)) {
        config_.vocab_size = vocab_size;
        config_.dim = 4;
        config_.hidden_dim = 4;
        config_.n_layers = 1;
        config_.n_heads = 1;
        config_.n_kv_heads = 1;
        config_.head_dim = 4;
        config_.max_seq_len = 64;
        config_.rope_dim = 4;
    }

    const model_config& config() const noexcept { return config_; }
    void reserve(std::int64_t, std::int64_t = 0) {}

    template <class Cache>
    void forward(std::span<const token_id> tokens, std::int64_t pos0, Cache& cache, std::span<float> logits,
                 logits_for which = logits_for::last) {
        if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
        const auto n = static_cast<std::int64_t>(tokens.size());
        cache.reserve(pos0 + n);
        const std::int64_t first = which == logits_for::all ? 0 : n - 1;
        const auto v = static_cast<std::size_t>(config_.vocab_size);
        for (std::int64_t i = first; i < n; ++i) {
            const auto next = static_cast<std::size_t>(pos0 + i + 1) - n_prompt_;  // index into the script
            const token_id t = next < script_.size() ? script_[next] : eos_id;
            float* row = logits.data() + static_cast<std::size_t>(i - first) * v;
            std::fill(row, row + v, 0.0f);
            row[static_cast<std::size_t>(t)] = 10.0f;
        }
        ++n_calls;
    }

    void set_sleep(int ms) { sleep_ms_ = ms; }
    int n_calls = 0;

private:
    model_config config_;
    std::size_t n_prompt_;
    std::vector<token_id> script_;
    int sleep_ms_ = 0;
};

// Wraps a real decoder and counts its forward calls and the tokens it runs, in particular those at
// prompt positions (pos < n_prompt): the work a shared prefill saves.
template <class Scalar>
class counting_decoder {
public:
    using scalar_type = Scalar;

    counting_decoder(decoder<Scalar>& inner, std::int64_t n_prompt) : inner_(&inner), n_prompt_(n_prompt) {}

    const model_config& config() const noexcept { return inner_->config(); }
    void reserve(std::int64_t n_tokens, std::int64_t max_positions = 0) { inner_->reserve(n_tokens, max_positions); }

    template <class Cache>
    void forward(std::span<const token_id> tokens, std::int64_t pos0, Cache& cache, std::span<float> logits,
                 logits_for which = logits_for::last) {
        ++n_calls;
        n_tokens += static_cast<std::int64_t>(tokens.size());
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(tokens.size()); ++i)
            n_prompt_position_tokens += pos0 + i < n_prompt_ ? 1 : 0;
        inner_->forward(tokens, pos0, cache, logits, which);
    }

    std::int64_t n_calls = 0;
    std::int64_t n_tokens = 0;
    std::int64_t n_prompt_position_tokens = 0;

private:
    decoder<Scalar>* inner_;  // non-owning
    std::int64_t n_prompt_;
};

}  // namespace nexttok::test
