#include <nexttok/sampling/greedy.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace nexttok {
namespace {

TEST(sampling_greedy, picks_the_argmax) {
    candidates c;
    c.assign(std::vector<float>{0.5f, 2.0f, -1.0f, 1.9f});
    EXPECT_EQ(greedy{}.select(c), 1);
}

TEST(sampling_greedy, ties_go_to_the_lowest_id) {
    candidates c;
    c.assign(std::vector<float>{0.5f, 2.0f, 2.0f, 1.0f, 2.0f});
    EXPECT_EQ(greedy{}.select(c), 1);
    c.sort();
    EXPECT_EQ(greedy{}.select(c), 1);
}

TEST(sampling_greedy, empty_set_gives_no_token) {
    candidates c;
    EXPECT_EQ(greedy{}.select(c), no_token);
}

TEST(sampling_greedy, matches_first_max_element_on_random_logits) {
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
