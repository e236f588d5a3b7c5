// Models for the speculative decoding tests: stories260K (the target, vocab 512), a random model of
// the same vocabulary (a draft that disagrees with it), and a q8_0 copy of stories260K built in
// memory (a draft that nearly agrees: "self-speculation" with coarser weights), and a q4_0 one (a
// draft that agrees less).
#pragma once

#include <nexttok/kernels/matmul.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/speculative/quantized_copy.hpp>
#include <nexttok/tensor/quantize.hpp>
#include <nexttok/tokenizer.hpp>

#include <test_data.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace nexttok::test {

inline const char* const stories_gguf = "models/stories260K/stories260K.gguf";

struct stories {
    std::shared_ptr<const model> m;
    tokenizer tok;
};

inline stories load_stories() {
    auto m = load_model(data_path(stories_gguf));
    return {m, load_tokenizer(*m->gguf())};
}

// A Llama-layout model with random weights and stories260K's vocabulary size (512) but another shape.
inline std::shared_ptr<const model> random_draft(std::uint64_t seed = 7) {
    model_config c;
    c.vocab_size = 512;
    c.dim = 32;
    c.hidden_dim = 64;
    c.n_layers = 1;
    c.n_heads = 2;
    c.n_kv_heads = 2;
    c.max_seq_len = 512;
    return make_random_model(c, seed);
}

inline std::shared_ptr<const model> q8_0_copy(const model& m) { return quantized_copy(m, tensor_type::q8_0); }
inline std::shared_ptr<const model> q4_0_copy(const model& m) { return quantized_copy(m, tensor_type::q4_0); }

}  // namespace nexttok::test
