// XTC on hand-built distributions: which top choices go, the threshold boundary, min_keep, the
// disabled settings, and the firing frequency against its binomial bound.
#include <nexttok/sampling/xtc.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace nexttok {
namespace {

// Probabilities 0.5, 0.25, 0.125, 0.0625, 0.0625 (exact in float) on shuffled ids.
const std::vector<float> dyadic{std::log(0.125f), std::log(0.5f), std::log(0.0625f), std::log(0.25f),
                                std::log(0.0625f)};
// ids by probability: 1 (0.5), 3 (0.25), 0 (0.125), 2 and 4 (0.0625)

std::vector<token_id> after(xtc& x, const std::vector<float>& logits) {
    candidates c;
    c.assign(logits);
    x.apply(c);
    return c.ids;
}

TEST(sampling_xtc, removes_every_top_choice_above_the_threshold_but_the_least_likely) {
    xtc x(1.0f, 0.1f, 1, 7);  // probability 1: always fires
    // Above 0.1: 0.5, 0.25, 0.125; the last of them (id 0) stays.
    EXPECT_EQ(after(x, dyadic), (std::vector<token_id>{0, 2, 4}));
}

TEST(sampling_xtc, probability_equal_to_the_threshold_counts_as_above) {
    xtc x(1.0f, 0.125f, 1, 7);
    EXPECT_EQ(after(x, dyadic), (std::vector<token_id>{0, 2, 4}));  // 0.125 >= 0.125
    xtc y(1.0f, std::nextafter(0.125f, 1.0f), 1, 7);
    EXPECT_EQ(after(y, dyadic), (std::vector<token_id>{3, 0, 2, 4}));  // only 0.5, 0.25 above: 0.25 stays
}

TEST(sampling_xtc, fewer_than_two_above_or_too_few_left_is_a_no_op) {
    xtc one_above(1.0f, 0.3f, 1, 7);  // only 0.5 >= 0.3
    EXPECT_EQ(after(one_above, dyadic).size(), 5u);
    xtc min_keep(1.0f, 0.1f, 4, 7);  // removing 2 would leave 3 < 4
    EXPECT_EQ(after(min_keep, dyadic).size(), 5u);
    xtc off_threshold(1.0f, 0.51f, 1, 7);
    EXPECT_EQ(after(off_threshold, dyadic).size(), 5u);
    xtc off_probability(0.0f, 0.1f, 1, 7);
    EXPECT_EQ(after(off_probability, dyadic).size(), 5u);
}

TEST(sampling_xtc, fires_with_the_given_probability) {
    // 10000 applications at probability 0.3: the count of firings is Binomial(10000, 0.3), sd 45.8;
    // the bound is 5 sd (seed 11).
    xtc x(0.3f, 0.1f, 1, 11);
    int fired = 0;
    for (int i = 0; i < 10000; ++i) fired += after(x, dyadic).size() == 3 ? 1 : 0;
    EXPECT_NEAR(fired, 3000, 5 * std::sqrt(10000 * 0.3 * 0.7));
    // reset() replays the same decisions.
    xtc a(0.5f, 0.1f, 1, 12), b(0.5f, 0.1f, 1, 12);
    std::vector<std::size_t> first, second;
    for (int i = 0; i < 50; ++i) first.push_back(after(a, dyadic).size());
    a.reset();
    for (int i = 0; i < 50; ++i) second.push_back(after(a, dyadic).size());
    EXPECT_EQ(first, second);
}

}  // namespace
}  // namespace nexttok
