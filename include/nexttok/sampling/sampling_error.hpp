// The error a sampler throws when it cannot pick a token: the processors removed every candidate
// (a logit bias of -inf on every token, banned sequences or no-repeat-n-gram covering the whole
// vocabulary, EOS masked by min-new-tokens in a vocabulary of EOS alone). llama.cpp and Hugging Face
// both end up with a softmax of nothing there (NaN probabilities); we stop with a message instead.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>

namespace nexttok {

class sampling_error : public error {
public:
    using error::error;
};

namespace detail {

// Throws sampling_error "<chain>::sample: the processors removed every candidate ...".
[[noreturn]] NEXTTOK_DECL void throw_all_removed(const char* chain);

}  // namespace detail
}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/sampling/impl/sampling_error.ipp>
#endif
