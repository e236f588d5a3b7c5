// The built-in demo: a small Llama-architecture model with random weights and a vocabulary of
// common English words (no byte tokens: a character outside them is <unk>), so that the example runs on a machine with no model file. Its text is
// meaningless; it shows the program working, not a model.
#pragma once

#include <nexttok/model/random_model.hpp>
#include <nexttok/tokenizer.hpp>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace demo {

inline constexpr std::uint64_t seed = 1234;

inline nexttok::tokenizer make_tokenizer() {
    using nexttok::token_data;
    using nexttok::token_type;
    std::vector<token_data> tokens = {
        {"<unk>", 0.0f, token_type::unknown}, {"<s>", 0.0f, token_type::control}, {"</s>", 0.0f, token_type::control}};
    std::istringstream words(
        "the a and to of was in he she it is they with that for on his her said one day little big "
        "time there were had but so very happy saw went play wanted named friend mom dog cat tree "
        "ball girl boy sun park home good fun toy bird fish red blue green run jump smile look "
        "together loved found could would not all up out what when then from into over under");
    float score = -1.0f;
    for (std::string w; words >> w; score -= 0.01f) tokens.push_back({"\xE2\x96\x81" + w, score, token_type::normal});
    for (const char* p : {".", ",", "!", "?", "\"", "'"}) tokens.push_back({p, score, token_type::normal});
    nexttok::special_token_ids special;
    special.unk = 0;
    special.bos = 1;
    special.eos = 2;
    return nexttok::tokenizer(nexttok::spm_tokenizer(nexttok::vocabulary(std::move(tokens), special), {}));
}

inline std::shared_ptr<const nexttok::model> make_model(std::int64_t vocab_size) {
    nexttok::model_config c;
    c.vocab_size = vocab_size;
    c.dim = 64;
    c.hidden_dim = 172;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.max_seq_len = 256;
    c.tied_output = true;
    return nexttok::make_random_model(c, seed);
}

}  // namespace demo
