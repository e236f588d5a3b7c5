// The error a sampler throws when it cannot pick a token: the processors removed every candidate
// (a logit bias of -inf on every token, banned sequences or no-repeat-n-gram covering the whole
// vocabulary, EOS masked by min-new-tokens in a vocabulary of EOS alone). llama.cpp and Hugging Face
// both end up with a softmax of nothing there (NaN probabilities); we stop with a message instead.
#pragma once

#include <nexttok/error.hpp>

#include <string>

namespace nexttok {

class sampling_error : public error {
public:
    using error::error;
};

namespace detail {

[[noreturn]] inline void throw_all_removed(const char* chain) {
    throw sampling_error(std::string(chain) +
                         "::sample: the processors removed every candidate (logit bias, banned sequences, "
                         "no-repeat-n-gram or min-new-tokens masked the whole vocabulary)");
}

}  // namespace detail
}  // namespace nexttok
