#include <nexttok/sampling/greedy.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace nexttok {
namespace {

TEST(SamplingGreedy, PicksTheArgmax) {
    candidates c;
    c.assign(std::vector<float>{0.5f, 2.0f, -1.0f, 1.9f});
    EXPECT_EQ(greedy{}.select(c), 1);
}

TEST(SamplingGreedy, TiesGoToTheLowestId) {
    candidates c;
    c.assign(std::vector<float>{0.5f, 2.0f, 2.0f, 1.0f, 2.0f});
    EXPECT_EQ(greedy{}.select(c), 1);
    c.sort();
    EXPECT_EQ(greedy{}.select(c), 1);
}

TEST(SamplingGreedy, EmptySetGivesNoToken) {
    candidates c;
    EXPECT_EQ(greedy{}.select(c), no_token);
}

TEST(SamplingGreedy, MatchesFirstMaxElementOnRandomLogits) {
    test::logit_source src(51);
    for (int round = 0; round < 50; ++round) {
        const auto logits = src.tied_logits(1000, 50);
        candidates c;
        c.assign(logits);
        const auto expected = std::max_element(logits.begin(), logits.end()) - logits.begin();
        EXPECT_EQ(greedy{}.select(c), expected);
    }
}

}  // namespace
}  // namespace nexttok
