// The stories260K model (GGUF) and its tokenizer, as the generation tests load it, and the options of
// a greedy run.
#pragma once

#include <nexttok/generation/generation_options.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/tokenizer/load_tokenizer_file.hpp>
#include <nexttok/tokenizer/gguf_vocab.hpp>
#include <nexttok/tokenizer/tokenizer.hpp>

#include "test_data.hpp"

#include <cstdint>
#include <memory>

namespace nexttok::test {

inline constexpr const char* stories_gguf = "models/stories260K/stories260K.gguf";

struct stories_model {
    std::shared_ptr<const model> m;
    tokenizer tok;
};

// A fresh load.
inline stories_model load_stories_gguf() {
    auto m = load_model(data_path(stories_gguf));
    return {m, load_tokenizer(*m->gguf())};
}

// Loaded once per test program, shared read-only.
inline const stories_model& shared_stories() {
    static const stories_model s = load_stories_gguf();
    return s;
}

// Greedy decoding of n new tokens.
inline generation_options greedy_options(std::int64_t n) {
    generation_options o;
    o.max_new_tokens = n;
    o.sampling.temperature = 0.0f;
    return o;
}

}  // namespace nexttok::test
