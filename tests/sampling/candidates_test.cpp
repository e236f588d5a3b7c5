#include <nexttok/sampling/candidates.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace nexttok {
namespace {

TEST(sampling_candidates, assign_loads_ids_in_order_unsorted_without_probs) {
    candidates c;
    const std::vector<float> logits{0.5f, -1.0f, 3.0f, 2.0f};
    c.sorted = true;
    c.probs_valid = true;
    c.assign(logits);
    EXPECT_EQ(c.size(), 4u);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1, 2, 3}));
    EXPECT_EQ(c.logits, logits);
    EXPECT_EQ(c.probs.size(), 4u);
    EXPECT_FALSE(c.sorted);
    EXPECT_FALSE(c.probs_valid);
}

TEST(sampling_candidates, assign_after_shrinking_restores_the_full_set_and_keeps_capacity) {
    candidates c;
    test::logit_source src(1);
    const auto logits = src.logits(5000);
    c.assign(logits);
    c.keep_top(10);
    ASSERT_EQ(c.size(), 10u);
    c.assign(logits);
    EXPECT_EQ(c.size(), 5000u);
    EXPECT_EQ(c.logits, logits);
    std::vector<token_id> expected(5000);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(c.ids, expected);
    EXPECT_GE(c.ids.capacity(), 5000u);
    EXPECT_GE(c.logits.capacity(), 5000u);
}

TEST(sampling_candidates, softmax_matches_double_precision_oracle) {
    candidates c;
    test::logit_source src(2);
    const auto logits = src.logits(1000, -20.0f, 20.0f);
    c.assign(logits);
    c.softmax();
    ASSERT_TRUE(c.probs_valid);
    const auto expected = test::oracle_softmax(logits);
    double sum = 0.0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        EXPECT_NEAR(c.probs[i], expected[i], 1e-6 * expected[i] + 1e-12) << "id " << i;
        sum += c.probs[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(sampling_candidates, softmax_is_stable_for_huge_logits) {
    candidates c;
    c.assign(std::vector<float>{1000.0f, 1000.0f, -1000.0f});
    c.softmax();
    EXPECT_FLOAT_EQ(c.probs[0], 0.5f);
    EXPECT_FLOAT_EQ(c.probs[1], 0.5f);
    EXPECT_EQ(c.probs[2], 0.0f);
}

TEST(sampling_candidates, sort_is_by_logit_descending_ties_lower_id_first) {
    candidates c;
    c.assign(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f, 2.0f, 1.0f});
    c.softmax();
    const std::vector<float> probs_by_id = c.probs;
    c.sort();
    EXPECT_TRUE(c.sorted);
    EXPECT_EQ(c.ids, (std::vector<token_id>{1, 3, 2, 4, 0, 5}));
    EXPECT_EQ(c.logits, (std::vector<float>{3, 3, 2, 2, 1, 1}));
    ASSERT_TRUE(c.probs_valid);  // sorting moves probs with their entries
    for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c.probs[i], probs_by_id[c.ids[i]]);
}

TEST(sampling_candidates, sort_matches_stable_sort_oracle_with_many_ties) {
    test::logit_source src(3);
    for (int round = 0; round < 20; ++round) {
        const auto logits = src.tied_logits(3000, 7);
        candidates c;
        c.assign(logits);
        c.sort();
        EXPECT_EQ(c.ids, test::oracle_order(logits));
    }
}

TEST(sampling_candidates, keep_top_matches_stable_sort_oracle_including_ties_at_the_cut) {
    test::logit_source src(4);
    for (std::size_t k : {1u, 2u, 5u, 40u, 999u, 2000u, 2999u, 3000u, 5000u}) {
        const auto logits = src.tied_logits(3000, 11);
        candidates c;
        c.assign(logits);
        c.keep_top(k);
        auto expected = test::oracle_order(logits);
        expected.resize(std::min<std::size_t>(k, expected.size()));
        EXPECT_EQ(c.ids, expected) << "k = " << k;
        EXPECT_TRUE(c.sorted);
    }
}

TEST(sampling_candidates, sort_prefix_orders_the_prefix_and_keeps_the_rest_in_previous_order) {
    candidates c;
    //                           id: 0     1     2     3     4     5     6
    c.assign(std::vector<float>{0.0f, 5.0f, 1.0f, 5.0f, 9.0f, 2.0f, 1.0f});
    c.sort_prefix(3);
    EXPECT_FALSE(c.sorted);
    // Prefix: 9 (id 4), 5 (id 1), 5 (id 3); remainder in id order: 0, 2, 5, 6.
    EXPECT_EQ(c.ids, (std::vector<token_id>{4, 1, 3, 0, 2, 5, 6}));
    EXPECT_EQ(c.logits, (std::vector<float>{9, 5, 5, 0, 1, 2, 1}));
}

TEST(sampling_candidates, sort_prefix_matches_oracle_on_both_selection_paths) {
    test::logit_source src(5);
    // n = 100 of 3000 takes the one-pass heap selection, n = 1000 nth_element.
    for (std::size_t n : {1u, 100u, 1000u}) {
        const auto logits = src.tied_logits(3000, 13);
        candidates c;
        c.assign(logits);
        c.sort_prefix(n);
        const auto order = test::oracle_order(logits);
        std::vector<token_id> expected(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n));
        std::vector<bool> in_prefix(logits.size(), false);
        for (token_id id : expected) in_prefix[static_cast<std::size_t>(id)] = true;
        for (token_id id = 0; id < static_cast<token_id>(logits.size()); ++id)
            if (!in_prefix[static_cast<std::size_t>(id)]) expected.push_back(id);  // the rest, id order
        EXPECT_EQ(c.ids, expected) << "n = " << n;
        for (std::size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c.logits[i], logits[static_cast<std::size_t>(c.ids[i])]);
    }
}

TEST(sampling_candidates, keep_if_preserves_order_and_invalidates_probs) {
    candidates c;
    c.assign(std::vector<float>{4.0f, 1.0f, 3.0f, 0.0f, 2.0f});
    c.softmax();
    c.keep_if([&](std::size_t i) { return c.logits[i] >= 2.0f; });
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 2, 4}));
    EXPECT_EQ(c.logits, (std::vector<float>{4, 3, 2}));
    EXPECT_EQ(c.probs.size(), 3u);
    EXPECT_FALSE(c.probs_valid);
}

TEST(sampling_candidates, argmax_breaks_ties_toward_the_lowest_id) {
    candidates c;
    c.assign(std::vector<float>{1.0f, 7.0f, 3.0f, 7.0f, 7.0f});
    EXPECT_EQ(c.argmax(), 1u);
    // Reorder so that a higher id comes first: the rule still picks id 1.
    c.ids = {4, 3, 2, 1, 0};
    c.logits = {7.0f, 7.0f, 3.0f, 7.0f, 1.0f};
    EXPECT_EQ(c.ids[c.argmax()], 1);
}

TEST(sampling_candidates, position_of_finds_ids_and_reports_absence) {
    candidates c;
    c.assign(std::vector<float>{1.0f, 2.0f, 3.0f});
    c.sort();
    EXPECT_EQ(c.position_of(2), 0u);
    EXPECT_EQ(c.position_of(0), 2u);
    EXPECT_EQ(c.position_of(7), c.size());
}

}  // namespace
}  // namespace nexttok
