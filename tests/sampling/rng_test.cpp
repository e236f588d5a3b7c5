#include <nexttok/sampling/rng.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace nexttok {
namespace {

// Published splitmix64 outputs from state 0 (Vigna's reference splitmix64.c).
TEST(sampling_rng, splitmix64_matches_reference_outputs) {
    std::uint64_t state = 0;
    EXPECT_EQ(detail::splitmix64_next(state), 0xe220a8397b1dcdafULL);
    EXPECT_EQ(detail::splitmix64_next(state), 0x6e789e6aa1b965f4ULL);
    EXPECT_EQ(detail::splitmix64_next(state), 0x06c45d188009454fULL);
    EXPECT_EQ(detail::splitmix64_next(state), 0xf88bb8a8724c81ecULL);
}

// xoshiro256** from state {1, 2, 3, 4}: the values produced by the authors' reference xoshiro256starstar.c
// (the test vector of the rand_xoshiro crate).
TEST(sampling_rng, xoshiro256_star_star_matches_reference_outputs) {
    auto g = xoshiro256ss::from_state({1, 2, 3, 4});
    const std::uint64_t expected[] = {11520ULL,
                                      0ULL,
                                      1509978240ULL,
                                      1215971899390074240ULL,
                                      1216172134540287360ULL,
                                      607988272756665600ULL,
                                      16172922978634559625ULL,
                                      8476171486693032832ULL,
                                      10595114339597558777ULL,
                                      2904607092377533576ULL};
    for (std::uint64_t e : expected) EXPECT_EQ(g.next(), e);
}

TEST(sampling_rng, seed_fills_state_with_splitmix64_outputs) {
    xoshiro256ss g(0);
    const std::array<std::uint64_t, 4> expected{0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL,
                                                0xf88bb8a8724c81ecULL};
    EXPECT_EQ(g.state(), expected);
}

TEST(sampling_rng, same_seed_same_stream_different_seed_different_stream) {
    xoshiro256ss a(42), b(42), c(43);
    int n_equal_to_c = 0;
    for (int i = 0; i < 100; ++i) {
        const auto x = a.next();
        EXPECT_EQ(x, b.next());
        n_equal_to_c += x == c.next();
    }
    EXPECT_EQ(n_equal_to_c, 0);
    a.seed(42);
    xoshiro256ss fresh(42);
    EXPECT_EQ(a, fresh);
}

TEST(sampling_rng, uniform_float_is_on_a24_bit_grid_in_zero_one) {
    xoshiro256ss g(7);
    const int n = 200000;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        const float u = g.uniform_float();
        ASSERT_GE(u, 0.0f);
        ASSERT_LT(u, 1.0f);
        const float scaled = u * 0x1.0p24f;
        ASSERT_EQ(scaled, std::floor(scaled));  // exactly k / 2^24
        sum += u;
    }
    // Mean of U[0,1): 0.5, standard error sqrt(1/12/n) = 6.5e-4; 6 standard errors.
    EXPECT_NEAR(sum / n, 0.5, 6 * std::sqrt(1.0 / 12.0 / n));
}

TEST(sampling_rng, uniform_float_uses_the_top24_bits) {
    auto g = xoshiro256ss::from_state({1, 2, 3, 4});
    auto h = xoshiro256ss::from_state({1, 2, 3, 4});
    for (int i = 0; i < 10; ++i) {
        const std::uint64_t x = h.next();
        EXPECT_EQ(g.uniform_float(), static_cast<float>(x >> 40) / 16777216.0f);
    }
}

}  // namespace
}  // namespace nexttok
