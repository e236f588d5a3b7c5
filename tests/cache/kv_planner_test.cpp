// The KV planner against closed-form arithmetic and against what the caches it sizes report.
#include <nexttok/cache/kv_planner.hpp>
#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace nexttok {
namespace {

static_assert(kv_format_of<float>() == kv_format::f32);
static_assert(kv_format_of<Eigen::half>() == kv_format::f16);
static_assert(kv_format_of<Eigen::bfloat16>() == kv_format::bf16);
static_assert(kv_format_of<block_q8_0>() == kv_format::q8_0);

const kv_shape stories_kv{5, 4, 8, 512};  // stories260K: rows of 32 values
const kv_shape llama7b{32, 32, 128, 4096};

TEST(kv_planner, row_and_block_bytes_in_closed_form) {
    EXPECT_EQ(kv_row_bytes(stories_kv, kv_format::f32), 32u * 4);
    EXPECT_EQ(kv_row_bytes(stories_kv, kv_format::f16), 32u * 2);
    EXPECT_EQ(kv_row_bytes(stories_kv, kv_format::bf16), 32u * 2);
    EXPECT_EQ(kv_row_bytes(stories_kv, kv_format::q8_0), 34u);
    EXPECT_EQ(kv_row_bytes(llama7b, kv_format::q8_0), 4096u / 32 * 34);
    // Llama-2-7B in f16, blocks of 16: 2 * 32 layers * 16 * 4096 * 2 bytes = 8 MiB.
    EXPECT_EQ(kv_block_bytes(llama7b, kv_format::f16, 16), std::size_t{8} << 20);
    EXPECT_EQ(kv_block_bytes(stories_kv, kv_format::f32, 1), 2u * 5 * 32 * 4);
}

template <class Cache>
void expect_block_bytes_match(kv_format f, std::int64_t block_size) {
    Cache c(stories_kv, {.n_blocks = 4, .block_size = block_size});
    EXPECT_EQ(kv_block_bytes(stories_kv, f, block_size), c.block_bytes())
        << to_string(f) << " block size " << block_size;
    EXPECT_EQ(kv_format_of<typename Cache::element_type>(), f);
}

TEST(kv_planner, block_bytes_equal_the_paged_caches) {
    for (std::int64_t bs : {1, 7, 16}) {
        expect_block_bytes_match<paged_kv_cache<float>>(kv_format::f32, bs);
        expect_block_bytes_match<paged_kv_cache<Eigen::half>>(kv_format::f16, bs);
        expect_block_bytes_match<paged_kv_cache<Eigen::bfloat16>>(kv_format::bf16, bs);
        expect_block_bytes_match<q8_0_paged_kv_cache<float>>(kv_format::q8_0, bs);
    }
}

TEST(kv_planner, contiguous_cache_is_a_pool_of_blocks_of_one_position) {
    EXPECT_EQ(kv_pool_bytes(stories_kv, kv_format::f32, 1, 512), kv_cache_bytes(stories_kv, 512, sizeof(float)));
    EXPECT_EQ(kv_pool_bytes(llama7b, kv_format::q8_0, 1, 4096), kv_cache_bytes_q8_0(llama7b, 4096));
}

TEST(kv_planner, plan_takes_the_most_blocks_that_fit) {
    const std::size_t block = kv_block_bytes(stories_kv, kv_format::f16, 16);  // 2 * 5 * 16 * 64 = 10240
    ASSERT_EQ(block, 10240u);
    for (std::size_t budget : {std::size_t{0}, block - 1, block, 37 * block + block - 1, std::size_t{1} << 30}) {
        const kv_plan p = plan_kv_pool(stories_kv, kv_format::f16, 16, budget);
        EXPECT_EQ(p.n_blocks, static_cast<std::int64_t>(budget / block)) << budget;
        EXPECT_EQ(p.n_positions, p.n_blocks * 16);
        EXPECT_EQ(p.bytes, static_cast<std::size_t>(p.n_blocks) * block);
        EXPECT_LE(p.bytes, budget);
    }
    // 16 GiB of Llama-2-7B f16 blocks of 16 positions: 2048 blocks, 32768 positions.
    const kv_plan p = plan_kv_pool(llama7b, kv_format::f16, 16, std::size_t{16} << 30);
    EXPECT_EQ(p.n_blocks, 2048);
    EXPECT_EQ(p.n_positions, 32768);
    EXPECT_EQ(kv_pool_sequences(llama7b, kv_format::f16, 16, std::size_t{16} << 30, 4096), 8);
    EXPECT_EQ(kv_pool_sequences(llama7b, kv_format::f16, 16, std::size_t{16} << 30, 4097), 7);
}

TEST(kv_planner, pool_bytes_round_each_sequence_up_to_whole_blocks) {
    const std::size_t block = kv_block_bytes(stories_kv, kv_format::f32, 16);
    EXPECT_EQ(kv_pool_bytes(stories_kv, kv_format::f32, 16, 100, 16), 16u * 7 * block);
    EXPECT_EQ(kv_pool_bytes(stories_kv, kv_format::f32, 16, 96, 16), 16u * 6 * block);
    EXPECT_EQ(kv_pool_bytes(stories_kv, kv_format::f32, 16, 0, 16), 0u);
    EXPECT_EQ(kv_pool_bytes(stories_kv, kv_format::f32, 16, 1), block);

    // The cache holding them uses exactly that much.
    paged_kv_cache<float> c(stories_kv, {.n_blocks = 112, .block_size = 16});
    for (int i = 0; i < 16; ++i) c.reserve(c.create(), 100);
    EXPECT_EQ(c.bytes_in_use(), kv_pool_bytes(stories_kv, kv_format::f32, 16, 100, 16));
    EXPECT_EQ(c.n_free_blocks(), 0);
}

TEST(kv_planner, invalid_input_throws) {
    EXPECT_THROW(kv_block_bytes(stories_kv, kv_format::f32, 0), invalid_argument_error);
    EXPECT_THROW(plan_kv_pool(stories_kv, kv_format::f32, -1, 1 << 20), invalid_argument_error);
    EXPECT_THROW(kv_row_bytes(kv_shape{2, 3, 16, 64}, kv_format::q8_0), invalid_argument_error);
    EXPECT_THROW(kv_row_bytes(kv_shape{0, 3, 16, 64}, kv_format::f32), invalid_argument_error);
    EXPECT_THROW(kv_pool_bytes(stories_kv, kv_format::f32, 16, -1), invalid_argument_error);
    EXPECT_THROW(kv_pool_bytes(stories_kv, kv_format::f32, 16, 10, -1), invalid_argument_error);
    EXPECT_THROW(kv_pool_sequences(stories_kv, kv_format::f32, 16, 1 << 20, 0), invalid_argument_error);
    EXPECT_THROW(kv_pool_bytes(llama7b, kv_format::f32, 16, std::numeric_limits<std::int64_t>::max() / 2, 1 << 20),
                 invalid_argument_error);
    try {
        kv_block_bytes(stories_kv, kv_format::f32, 0);
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("block_size is 0"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace nexttok
