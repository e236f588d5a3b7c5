// A Hugging Face directory end to end: the stories260K directory (safetensors + tokenizer.model)
// generates llama2.c's documented greedy text, like the GGUF and llama2.c files of that model.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/generation/generate.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/stopping.hpp>
#include <nexttok/tokenizer.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace nexttok {
namespace {

TEST(hf_directory_generation, stories260_k_greedy_text_from_bos) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/hf/tokenizer.model");
    const auto dir = test::data_path("models/stories260K/hf");
    auto m = load_model(dir);
    const tokenizer tok = load_tokenizer_file(dir);
    ASSERT_EQ(static_cast<std::int64_t>(tok.vocab_size()), m->config().vocab_size);
    decoder<float> dec(m);
    kv_cache<float> cache(m->config());
    auto sampler = make_sampler_chain(greedy{});
    max_new_tokens stop(200);
    const auto r = generate(dec, cache, tok, tok.encode("", true), sampler, stop);
    std::ifstream in(test::data_path("models/stories260K/expected_greedy_from_bos.txt"));
    std::stringstream expected;
    expected << in.rdbuf();
    ASSERT_GT(r.text.size(), 400u);
    EXPECT_EQ(r.text, expected.str().substr(0, r.text.size()));
    EXPECT_EQ(tok.encode("Once upon a time", true), (std::vector<token_id>{1, 403, 407, 261, 378}));
}

}  // namespace
}  // namespace nexttok
