// Speculative decoding on a target that computes NaN once it is fed token T (non_finite_model.hpp),
// drafted by the healthy model (so T is drafted and verified in a batch of rows): the round ends
// with an error naming T's position before any NaN row is turned into a distribution.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/speculative.hpp>
#include <nexttok/tokenizer.hpp>

#include <non_finite_model.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nexttok {
namespace {

TEST(speculative, nan_logits_end_generation_with_an_error_naming_the_position) {
    NEXTTOK_REQUIRE_DATA(test::non_finite_source);
    test::temp_dir dir;
    const test::non_finite_case c = test::make_non_finite_case(dir);
    ASSERT_GE(c.k, 0);
    const tokenizer tok = load_tokenizer(*c.broken->gguf());
    for (const std::int64_t draft_max : {1, 4}) {
        decoder<float> dec(c.broken), draft_dec(c.healthy);
        kv_cache<float> cache(c.broken->config(), 128), draft_cache(c.healthy->config(), 128);
        model_drafter draft(draft_dec, draft_cache);
        generation_options o;
        o.sampling.temperature = 0.0f;
        o.ignore_eos = true;
        o.max_new_tokens = 16;
        std::vector<token_id> streamed;
        try {
            (void)generate_speculative(dec, cache, draft, tok, c.prompt, o, {.draft_max = draft_max, .draft_min = 1},
                                       [&](const token_event& e) {
                                           if (e.id != no_token) streamed.push_back(e.id);
                                           return true;
                                       });
            ADD_FAILURE() << "generated from NaN logits";
        } catch (const error& e) {
            const auto position = static_cast<std::int64_t>(c.prompt.size()) + c.k;
            EXPECT_NE(std::string(e.what()).find("speculative decoding: " + test::nan_position_message(position)),
                      std::string::npos)
                << e.what();
        }
        EXPECT_EQ(streamed, std::vector<token_id>(c.healthy_tokens.begin(), c.healthy_tokens.begin() + c.k + 1))
            << draft_max;
    }
}

// The roles swapped: a healthy target drafted by the broken model. The draft's own NaN logits
// (from T's position on, which it reaches through the target's healthy tokens) are an error too,
// naming the draft.
TEST(speculative, nan_logits_of_the_draft_model_are_an_error) {
    NEXTTOK_REQUIRE_DATA(test::non_finite_source);
    test::temp_dir dir;
    const test::non_finite_case c = test::make_non_finite_case(dir);
    ASSERT_GE(c.k, 0);
    const tokenizer tok = load_tokenizer(*c.healthy->gguf());
    decoder<float> dec(c.healthy), draft_dec(c.broken);
    kv_cache<float> cache(c.healthy->config(), 128), draft_cache(c.broken->config(), 128);
    model_drafter draft(draft_dec, draft_cache);
    generation_options o;
    o.sampling.temperature = 0.0f;
    o.ignore_eos = true;
    o.max_new_tokens = 16;
    try {
        (void)generate_speculative(dec, cache, draft, tok, c.prompt, o, {.draft_max = 4, .draft_min = 1});
        ADD_FAILURE() << "drafted from NaN logits";
    } catch (const error& e) {
        // The draft runs the target's new tokens in one call and reads the last row's logits, so
        // the row it names is T's or one of the few after it in that call (attention carries the NaN on).
        const std::string m = e.what(), head = "speculative decoding: the draft model: the logits at position ";
        const std::size_t at = m.find(head);
        ASSERT_NE(at, std::string::npos) << m;
        const std::int64_t named = std::stoll(m.substr(at + head.size()));
        const auto position = static_cast<std::int64_t>(c.prompt.size()) + c.k;
        EXPECT_GE(named, position) << m;
        EXPECT_LE(named, position + 5) << m;  // draft_max + 1
        EXPECT_NE(m.find(" hold NaN"), std::string::npos) << m;
    }
}

}  // namespace
}  // namespace nexttok
