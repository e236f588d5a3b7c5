// top-k against llama.cpp's definition: keep the k highest logits; k <= 0 no-op; k >= size keeps all
// (sorted); ties at the cut resolved by the stable order (lower id first).
#include <nexttok/sampling/top_k.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace nexttok {
namespace {

TEST(sampling_top_k, keeps_the_k_highest_logits_sorted) {
    candidates c;
    c.assign(std::vector<float>{0.1f, 2.5f, -1.0f, 4.0f, 3.0f});
    top_k(2).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{3, 4}));
    EXPECT_TRUE(c.sorted);
}

TEST(sampling_top_k, ties_at_the_cut_keep_the_lower_ids) {
    //                          id: 0     1     2     3     4     5     6
    const std::vector<float> logits{2.0f, 5.0f, 2.0f, 1.0f, 2.0f, 5.0f, 2.0f};
    candidates c;
    c.assign(logits);
    top_k(3).apply(c);
    // 5 (ids 1, 5), then one of the four 2s: the lowest id, 0.
    EXPECT_EQ(c.ids, (std::vector<token_id>{1, 5, 0}));
    c.assign(logits);
    top_k(4).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{1, 5, 0, 2}));
    // All tied: the k lowest ids.
    c.assign(std::vector<float>(10, 1.0f));
    top_k(3).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1, 2}));
}

TEST(sampling_top_k, non_positive_k_is_a_no_op) {
    const std::vector<float> logits{0.1f, 2.5f, -1.0f, 4.0f};
    for (int k : {0, -1, -100}) {
        candidates c;
        c.assign(logits);
        top_k(k).apply(c);
        EXPECT_EQ(c.ids, (std::vector<token_id>{0, 1, 2, 3})) << "k = " << k;
        EXPECT_EQ(c.logits, logits);
        EXPECT_FALSE(c.sorted);
    }
}

TEST(sampling_top_k, k_at_least_the_size_keeps_everything_and_sorts) {
    const std::vector<float> logits{0.1f, 2.5f, -1.0f, 4.0f};
    for (int k : {4, 5, 1000}) {
        candidates c;
        c.assign(logits);
        top_k(k).apply(c);
        EXPECT_EQ(c.ids, (std::vector<token_id>{3, 1, 0, 2})) << "k = " << k;
        EXPECT_TRUE(c.sorted);
    }
}

TEST(sampling_top_k, matches_stable_sort_oracle_on_random_tied_logits) {
    test::logit_source src(11);
    for (int k : {1, 3, 40, 100, 1500}) {
        const auto logits = src.tied_logits(2000, 9);
        candidates c;
        c.assign(logits);
        top_k(k).apply(c);
        auto expected = test::oracle_order(logits);
        expected.resize(static_cast<std::size_t>(k));
        EXPECT_EQ(c.ids, expected) << "k = " << k;
    }
}

TEST(sampling_top_k, applied_to_a_sorted_set_truncates) {
    candidates c;
    c.assign(std::vector<float>{3.0f, 1.0f, 2.0f, 0.0f});
    c.sort();
    top_k(2).apply(c);
    EXPECT_EQ(c.ids, (std::vector<token_id>{0, 2}));
}

}  // namespace
}  // namespace nexttok
