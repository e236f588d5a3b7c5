// Locally typical sampling against an oracle in double (entropy, |-log p - H|, stable order by score,
// cut after the first cum > p): the equality boundary where llama.cpp and HF differ, min_keep, order.
#include <nexttok/sampling/typical_p.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

namespace nexttok {
namespace {

// The ids typical sampling keeps, in the order it leaves them; nullopt when the float computation of
// the library could legitimately differ (two scores or the cumulative sum within rounding of a tie).
std::optional<std::vector<token_id>> oracle_typical(const std::vector<float>& logits, double p, std::size_t min_keep) {
    const auto probs = test::oracle_softmax(logits);
    double h = 0.0;
    for (double q : probs) h -= q > 0 ? q * std::log(q) : 0.0;
    auto score = [&](token_id t) {
        return std::fabs(-std::log(probs[static_cast<std::size_t>(t)]) - h);
    };
    std::vector<token_id> ids = test::oracle_order(logits);  // logit desc, id asc: the tie order
    std::stable_sort(ids.begin(), ids.end(), [&](token_id a, token_id b) { return score(a) < score(b); });
    for (std::size_t i = 1; i < ids.size(); ++i)
        if (logits[ids[i]] != logits[ids[i - 1]] && score(ids[i]) - score(ids[i - 1]) < 1e-4) return std::nullopt;
    double cum = 0.0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        cum += probs[static_cast<std::size_t>(ids[i])];
        if (std::fabs(cum - p) < 1e-5) return std::nullopt;
        if (cum > p && i + 1 >= min_keep)
            return std::vector<token_id>(ids.begin(), ids.begin() + static_cast<long>(i) + 1);
    }
    return ids;
}

std::vector<token_id> kept(const std::vector<float>& logits, float p, std::size_t min_keep = 1) {
    candidates c;
    c.assign(logits);
    typical_p(p, min_keep).apply(c);
    EXPECT_FALSE(c.sorted);
    return c.ids;
}

TEST(sampling_typical_p, equality_at_the_boundary_keeps_one_more_as_llama_cpp) {
    // Four equal logits: p = 0.25 each, exact in float; every score is equal, so the tie order is id
    // order. cum = 0.25, 0.5 (== p: not > p), 0.75 > 0.5: three kept. HF would keep all four (its cut
    // is cum >= p, and it keeps every candidate tied in score with the last one).
    EXPECT_EQ(kept({1.0f, 1.0f, 1.0f, 1.0f}, 0.5f), (std::vector<token_id>{0, 1, 2}));
    EXPECT_EQ(kept({1.0f, 1.0f, 1.0f, 1.0f}, std::nextafter(0.5f, 0.0f)), (std::vector<token_id>{0, 1}));
}

TEST(sampling_typical_p, can_drop_the_most_likely_tokens) {
    // Two heads of p ~ 0.25, ten middle tokens of ~ 0.04, a hundred of ~ 0.001: H ~ 2.67 nats. The
    // middle tokens (-log p = 3.2, score 0.55) are more typical than the heads (1.39, score 1.28), so
    // a mass of 0.3 is reached with middle tokens alone.
    std::vector<float> logits(112, 0.0f);
    logits[5] = logits[70] = 5.52f;
    for (int i = 10; i < 20; ++i) logits[static_cast<std::size_t>(i)] = 3.69f;
    const auto want = oracle_typical(logits, 0.3, 1);
    ASSERT_TRUE(want);
    const auto got = kept(logits, 0.3f);
    EXPECT_EQ(got, *want);
    EXPECT_EQ(got, (std::vector<token_id>{10, 11, 12, 13, 14, 15, 16, 17}));
}

TEST(sampling_typical_p, matches_the_oracle_on_random_logits) {
    test::logit_source src(501);
    int compared = 0;
    for (int round = 0; round < 300; ++round) {
        const auto logits = src.logits(50, -4.0f, 4.0f);
        const float p = src.uniform(0.05f, 0.99f);
        const std::size_t min_keep = static_cast<std::size_t>(round % 5);
        const auto want = oracle_typical(logits, p, min_keep);
        if (!want) continue;
        ++compared;
        EXPECT_EQ(kept(logits, p, min_keep), *want) << "round " << round;
    }
    EXPECT_GT(compared, 200);
}

TEST(sampling_typical_p, min_keep_and_no_op) {
    const std::vector<float> logits{5.0f, 0.0f, -1.0f, -2.0f};
    EXPECT_EQ(kept(logits, 0.01f, 3).size(), 3u);
    EXPECT_EQ(kept(logits, 0.01f, 10).size(), 4u);  // more than there are: all
    candidates c;
    c.assign(logits);
    typical_p(1.0f).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1, 2, 3}));
    EXPECT_FALSE(c.probs_valid);
    EXPECT_THROW(typical_p(NAN), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok
