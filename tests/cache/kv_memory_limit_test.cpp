// Memory limits of the KV caches and the block pool: the bytes they need are checked against
// max_bytes before anything is allocated (the planner's figures are the oracle), a limit of
// exactly the need is enough, and a model whose context_length is absurd gives an error instead
// of an allocation the machine cannot back.
#include "../support/file_patch.hpp"
#include "../support/test_data.hpp"

#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/kv_planner.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/model/load_model.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

// The caches allocate through aligned operator new (detail::allocate_buffer); counting its bytes
// shows that a refused cache allocated nothing, and refusing it plays a system out of memory.
// Replaced for this program only, forwarding to aligned_alloc.
namespace {
std::atomic<std::size_t> aligned_bytes_allocated{0};
std::atomic<bool> refuse_aligned{false};

void* counted_aligned_new(std::size_t size, std::align_val_t align) {
    if (refuse_aligned) throw std::bad_alloc();
    aligned_bytes_allocated += size;
    const auto a = static_cast<std::size_t>(align);
    void* p = std::aligned_alloc(a, (size + a - 1) / a * a);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
}  // namespace

void* operator new(std::size_t size, std::align_val_t align) { return counted_aligned_new(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return counted_aligned_new(size, align); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace nexttok {
namespace {

const kv_shape stories{5, 4, 8, 512};  // stories260K: rows of 32 values

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Constructs Cache with the limit need - 1: a resource_error naming the bytes needed and the
// limit, and no allocation. Then with the limit need: bytes() == need.
template <class Cache>
void expect_contiguous_limit(std::int64_t capacity, kv_format f) {
    const std::size_t need = kv_pool_bytes(stories, f, 1, capacity);
    const std::size_t before = aligned_bytes_allocated;
    try {
        Cache c(stories, capacity, need - 1);
        ADD_FAILURE() << to_string(f) << ": a limit of one byte less than the need was accepted";
    } catch (const resource_error& e) {
        const std::string m = e.what();
        EXPECT_TRUE(contains(m, std::to_string(need) + " bytes")) << m;
        EXPECT_TRUE(contains(m, std::to_string(need - 1) + " bytes")) << m;
        EXPECT_TRUE(contains(
            m, std::to_string(capacity) + " positions x 5 layers x 4 KV heads x head size 8 in " + to_string(f)))
            << m;
        EXPECT_TRUE(contains(m, "lower the context size")) << m;
    }
    EXPECT_EQ(aligned_bytes_allocated.load(), before) << to_string(f) << ": the refused cache allocated memory";
    Cache c(stories, capacity, need);
    EXPECT_EQ(c.bytes(), need);
    EXPECT_EQ(c.capacity(), capacity);
}

TEST(kv_memory_limit, contiguous_caches_refuse_a_limit_below_the_planned_bytes) {
    expect_contiguous_limit<kv_cache<float>>(300, kv_format::f32);
    expect_contiguous_limit<kv_cache<Eigen::half>>(512, kv_format::f16);
    expect_contiguous_limit<kv_cache<Eigen::bfloat16>>(7, kv_format::bf16);
    expect_contiguous_limit<q8_0_kv_cache<float>>(300, kv_format::q8_0);
    expect_contiguous_limit<no_cache<float>>(64, kv_format::f32);
}

TEST(kv_memory_limit, q8_0_advice_is_offered_only_to_scalar_caches) {
    const std::size_t need = kv_pool_bytes(stories, kv_format::f32, 1, 512);
    try {
        kv_cache<float> c(stories, 512, need / 2);
        FAIL() << "accepted";
    } catch (const resource_error& e) {
        EXPECT_TRUE(contains(e.what(), "q8_0 cache")) << e.what();
    }
    try {
        q8_0_kv_cache<float> c(stories, 512, 1);
        FAIL() << "accepted";
    } catch (const resource_error& e) {
        EXPECT_FALSE(contains(e.what(), "q8_0 cache")) << e.what();
    }
}

// Llama-3-70B's shape at 2^24 positions: 2 * 80 * 2^24 * 1024 * 4 bytes = 10 TiB, more than the
// physical memory of any machine this runs on, so the default limit (0) refuses it.
TEST(kv_memory_limit, default_limit_is_the_physical_memory) {
    const kv_shape big{80, 8, 128, std::int64_t{1} << 24};
    const std::size_t need = kv_pool_bytes(big, kv_format::f32, 1, big.max_seq_len);
    ASSERT_EQ(need, std::size_t{10} << 40);
    const std::size_t before = aligned_bytes_allocated;
    try {
        kv_cache<float> c(big);
        FAIL() << "a 10 TiB cache was accepted";
    } catch (const resource_error& e) {
        EXPECT_TRUE(contains(e.what(), std::to_string(need) + " bytes (10.00 TiB)")) << e.what();
    }
    EXPECT_EQ(aligned_bytes_allocated.load(), before);
}

// A std::bad_alloc while allocating becomes a resource_error with the bytes asked for.
TEST(kv_memory_limit, allocation_failure_is_a_resource_error_with_the_bytes) {
    const std::size_t need = kv_pool_bytes(stories, kv_format::f16, 1, 100);
    refuse_aligned = true;
    try {
        kv_cache<Eigen::half> c(stories, 100);
        ADD_FAILURE() << "made without memory";
    } catch (const resource_error& e) {
        EXPECT_TRUE(contains(e.what(), std::to_string(need) + " bytes")) << e.what();
        EXPECT_TRUE(contains(e.what(), "refused")) << e.what();
    }
    refuse_aligned = false;
    // The paged pool allocates slabs as blocks are first used: reserve() fails, naming the slab.
    paged_kv_cache<float> pool(stories, {.n_blocks = 8, .block_size = 16});
    const seq_id s = pool.create();
    refuse_aligned = true;
    try {
        pool.reserve(s, 20);
        ADD_FAILURE() << "reserved without memory";
    } catch (const resource_error& e) {
        EXPECT_TRUE(contains(e.what(), std::to_string(8 * kv_block_bytes(stories, kv_format::f32, 16)) + " bytes"))
            << e.what();
    }
    refuse_aligned = false;
    pool.reserve(s, 20);  // the failed reserve left the pool usable
    EXPECT_EQ(pool.size(s), 20);
}

template <class Cache>
void expect_pool_limit(kv_format f) {
    constexpr std::int64_t n_blocks = 37, block_size = 16;
    // The whole pool, as the planner counts it: n_blocks blocks of kv_block_bytes.
    const std::size_t need = kv_pool_bytes(stories, f, block_size, n_blocks * block_size);
    ASSERT_EQ(need, n_blocks * kv_block_bytes(stories, f, block_size));
    const std::size_t before = aligned_bytes_allocated;
    try {
        Cache c(stories, {.n_blocks = n_blocks,
                          .block_size = block_size,
                          .max_seq_len = n_blocks * block_size,
                          .max_bytes = need - 1});
        ADD_FAILURE() << to_string(f) << ": a pool over its limit was accepted";
    } catch (const resource_error& e) {
        const std::string m = e.what();
        EXPECT_TRUE(contains(m, std::to_string(need) + " bytes")) << m;
        EXPECT_TRUE(contains(m, std::to_string(need - 1) + " bytes")) << m;
        EXPECT_TRUE(contains(m, "a pool of 37 blocks of 16 positions x 5 layers x 4 KV heads x head size 8 in " +
                                    std::string(to_string(f))))
            << m;
    }
    EXPECT_EQ(aligned_bytes_allocated.load(), before) << to_string(f);
    Cache c(stories,
            {.n_blocks = n_blocks, .block_size = block_size, .max_seq_len = n_blocks * block_size, .max_bytes = need});
    const seq_id s = c.create();
    c.reserve(s, n_blocks * block_size);  // every block in use: the pool really holds `need` bytes
    EXPECT_EQ(c.bytes(), need);
}

TEST(kv_memory_limit, paged_pools_refuse_a_limit_below_the_planned_bytes) {
    expect_pool_limit<paged_kv_cache<float>>(kv_format::f32);
    expect_pool_limit<paged_kv_cache<Eigen::half>>(kv_format::f16);
    expect_pool_limit<q8_0_paged_kv_cache<float>>(kv_format::q8_0);
}

// stories260K with its llama.context_length (a uint32) patched.
std::shared_ptr<const model> stories_with_context(const test::temp_dir& dir, std::uint32_t context_length) {
    test::bytes b = test::read_bytes(test::data_path("models/stories260K/stories260K.gguf"));
    const std::size_t key = test::find(b, "llama.context_length") + std::string("llama.context_length").size();
    EXPECT_EQ(test::get<std::uint32_t>(b, key), 4u);  // GGUF type uint32
    test::put<std::uint32_t>(b, key + 4, context_length);
    return load_model(dir.write("context.gguf", b));
}

TEST(kv_memory_limit, absurd_context_length_is_an_error_not_an_allocation) {
    NEXTTOK_REQUIRE_DATA("models/stories260K/stories260K.gguf");
    test::temp_dir dir;
    const std::size_t before = aligned_bytes_allocated;
    // The loader refuses a context no cache could hold (more than 2^24 positions) up front.
    try {
        (void)stories_with_context(dir, 0xffffffffu);
        FAIL() << "a model of 2^32 positions was loaded";
    } catch (const format_error& e) {
        EXPECT_TRUE(contains(e.what(), "max_seq_len = 4294967295")) << e.what();
    }
    EXPECT_EQ(aligned_bytes_allocated.load(), before);
    // A context the cache accepts in positions (2^24) but not in bytes under a limit:
    // 2 * 5 layers * 2^24 * 32 values * 4 bytes = 20 GiB.
    const auto large = stories_with_context(dir, 1u << 24);
    ASSERT_EQ(large->config().max_seq_len, std::int64_t{1} << 24);
    try {
        kv_cache<float> c(large->config(), 0, std::size_t{1} << 30);
        FAIL() << "a 20 GiB cache was made under a 1 GiB limit";
    } catch (const resource_error& e) {
        EXPECT_TRUE(contains(e.what(), std::to_string(std::size_t{20} << 30) + " bytes")) << e.what();
    }
    EXPECT_EQ(aligned_bytes_allocated.load(), before);
    // An explicit capacity overrides the large default.
    kv_cache<float> small(large->config(), 64);
    EXPECT_EQ(small.bytes(), kv_pool_bytes(large->config(), kv_format::f32, 1, 64));
}

// A shape built by hand (no loader to validate it) whose default capacity is beyond any cache.
TEST(kv_memory_limit, default_capacity_beyond_a_cache_names_the_context_length) {
    const kv_shape absurd{5, 4, 8, std::int64_t{1} << 40};
    try {
        kv_cache<float> c(absurd);
        FAIL() << "accepted";
    } catch (const invalid_argument_error& e) {
        EXPECT_TRUE(contains(e.what(), "context length of 1099511627776 positions")) << e.what();
        EXPECT_TRUE(contains(e.what(), "--ctx-size")) << e.what();
    }
}

}  // namespace
}  // namespace nexttok
