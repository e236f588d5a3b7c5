// encode_continuation() on stories260K: the continuation is tokenized as part of prompt + text, the
// prompt's tokens are what the prompt alone encodes to, and the score of the README's example is
// what examples/score prints (perplexity 1.1181), not the 7.5 of the text encoded on its own.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/generation/score.hpp>
#include <nexttok/tokenizer.hpp>

#include "stories_model.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nexttok {
namespace {

TEST(encode_continuation, splits_the_whole_strings_tokens_at_the_prompt) {
    NEXTTOK_REQUIRE_DATA(test::stories_gguf);
    const test::stories_model& s = test::shared_stories();
    const std::string prompt = "Once upon a time", text = ", there was a little girl named Lily.";
    const prompt_and_continuation split = encode_continuation(s.tok, prompt, text, true);
    EXPECT_EQ(split.prompt, s.tok.encode(prompt, true));
    std::vector<token_id> joined = split.prompt;
    joined.insert(joined.end(), split.continuation.begin(), split.continuation.end());
    EXPECT_EQ(joined, s.tok.encode(prompt + text, true));
    // The text on its own starts with a token the whole string does not hold there.
    const std::vector<token_id> alone = s.tok.encode(text, false);
    ASSERT_FALSE(alone.empty());
    EXPECT_NE(alone.front(), split.continuation.front());

    decoder<float> dec(s.m, 1);
    kv_cache<float> cache(s.m->config(), 128);
    // The figures the README shows for examples/score on this text: 11 tokens after 5 prompt tokens,
    // log-probability -1.2280 nats, perplexity 1.1181.
    ASSERT_EQ(split.prompt.size(), 5u);
    ASSERT_EQ(split.continuation.size(), 11u);
    const auto right = score(dec, cache, split.prompt, split.continuation);
    EXPECT_NEAR(right.logprob, -1.2280, 5e-4);
    EXPECT_NEAR(right.perplexity(), 1.1181, 5e-4);
    // Encoded alone, the text scores far worse (perplexity 7.5 against 1.12).
    EXPECT_GT(score(dec, cache, split.prompt, alone).perplexity(), 5.0 * right.perplexity());

    // A word cut by the boundary ("Once up" + "on a time") is one token of the continuation's, and the
    // prompt keeps only the tokens both encodings share.
    const prompt_and_continuation cut = encode_continuation(s.tok, "Once up", "on a time", true);
    std::vector<token_id> all = cut.prompt;
    all.insert(all.end(), cut.continuation.begin(), cut.continuation.end());
    EXPECT_EQ(all, s.tok.encode("Once upon a time", true));
    EXPECT_LE(cut.prompt.size(), s.tok.encode("Once up", true).size());

    // With no prompt, the text follows BOS alone; nothing to condition on, or nothing added, is an error.
    EXPECT_EQ(encode_continuation(s.tok, "", "Once", true).prompt, (std::vector<token_id>{s.tok.bos()}));
    EXPECT_THROW((void)encode_continuation(s.tok, "", "Once", false), invalid_argument_error);
    EXPECT_THROW((void)encode_continuation(s.tok, "Once", "", true), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok
