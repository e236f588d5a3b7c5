// Why a generation finished. Every stopping criterion answers with one of these; `none` means "keep
// going". generate() reports the reason of the criterion that fired first.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace nexttok {

enum class finish_reason : std::uint8_t {
    none,            // not finished: continue generating
    eos,             // the model produced an end-of-sequence token
    max_new_tokens,  // the budget of generated tokens is spent
    stop_token,      // a token the caller listed as a stop token was produced
    stop_string,     // the generated text contains a stop string
    deadline,        // the wall-clock deadline passed
    cancelled,       // the caller cancelled the request
    cache_full,      // the KV cache has no room for another token (cache policy "stop")
    callback,        // the caller's streaming callback asked to stop
    max_length,      // the sequence (prompt + generated) reached its maximum total length
    predicate,       // a caller's stop_when predicate returned true
    error,           // generation failed (non-finite logits); generation_result::error holds the message
};

// "none", "eos", "max_new_tokens", "stop_token", "stop_string", "deadline", "cancelled", "cache_full",
// "callback", "max_length", "predicate", "error" (the enumerator's name); "unknown" for a value outside the enumeration. The view refers
// to a string literal: it never dangles.
constexpr std::string_view to_string(finish_reason reason) noexcept {
    switch (reason) {
        case finish_reason::none:
            return "none";
        case finish_reason::eos:
            return "eos";
        case finish_reason::max_new_tokens:
            return "max_new_tokens";
        case finish_reason::stop_token:
            return "stop_token";
        case finish_reason::stop_string:
            return "stop_string";
        case finish_reason::deadline:
            return "deadline";
        case finish_reason::cancelled:
            return "cancelled";
        case finish_reason::cache_full:
            return "cache_full";
        case finish_reason::callback:
            return "callback";
        case finish_reason::max_length:
            return "max_length";
        case finish_reason::predicate:
            return "predicate";
        case finish_reason::error:
            return "error";
    }
    return "unknown";
}

inline std::ostream& operator<<(std::ostream& os, finish_reason reason) { return os << to_string(reason); }

}  // namespace nexttok
