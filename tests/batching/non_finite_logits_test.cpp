// The scheduler on a model that computes NaN once it is fed token T (non_finite_model.hpp): the
// request that feeds T ends with finish_reason::error and the message naming the position, while
// a request in the same batch that never feeds T gets exactly the healthy model's tokens; the
// scheduler then serves later requests.
#include <nexttok/batching.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>

#include <non_finite_model.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace nexttok {
namespace {

TEST(scheduler, a_request_with_nan_logits_fails_alone) {
    NEXTTOK_REQUIRE_DATA(test::non_finite_source);
    test::temp_dir dir;
    const test::non_finite_case c = test::make_non_finite_case(dir);
    ASSERT_GE(c.k, 0);
    // A second prompt whose healthy greedy run never feeds T.
    std::vector<token_id> other, other_tokens;
    for (const std::vector<token_id>& p :
         std::vector<std::vector<token_id>>{{1, 5, 9, 200}, {1, 3}, {7, 77, 7}, {2, 90, 91, 92}}) {
        const auto tokens = test::greedy_tokens(c.healthy, p, 16);
        if (std::find(p.begin(), p.end(), c.poisoned) == p.end() &&
            std::find(tokens.begin(), tokens.end(), c.poisoned) == tokens.end()) {
            other = p;
            other_tokens = tokens;
            break;
        }
    }
    ASSERT_FALSE(other.empty()) << "every candidate prompt feeds the poisoned token";

    decoder<float> dec(c.broken);
    paged_kv_cache<float> pool(c.broken->config(), {.n_blocks = 64, .block_size = 4});
    scheduler<float> batch(dec, pool, nullptr, {.max_step_tokens = 64});
    const request_id bad = batch.submit(c.prompt, make_sampler_chain(greedy{}), max_new_tokens(16));
    const request_id good = batch.submit(other, make_sampler_chain(greedy{}), max_new_tokens(16));
    batch.run();

    const generation_result failed = *batch.take_result(bad);
    EXPECT_EQ(failed.reason, finish_reason::error);
    const auto position = static_cast<std::int64_t>(c.prompt.size()) + c.k;
    EXPECT_NE(failed.error.find(test::nan_position_message(position)), std::string::npos) << failed.error;
    EXPECT_EQ(failed.tokens, std::vector<token_id>(c.healthy_tokens.begin(), c.healthy_tokens.begin() + c.k + 1));

    const generation_result ok = *batch.take_result(good);
    EXPECT_EQ(ok.reason, finish_reason::max_new_tokens);
    EXPECT_TRUE(ok.error.empty());
    EXPECT_EQ(ok.tokens, other_tokens);

    // Later requests are served; the failed one's blocks went back to the pool.
    const request_id later = batch.submit(other, make_sampler_chain(greedy{}), max_new_tokens(16));
    batch.run();
    EXPECT_EQ(batch.take_result(later)->tokens, other_tokens);
    EXPECT_EQ(pool.n_sequences(), 0);
}

}  // namespace
}  // namespace nexttok
