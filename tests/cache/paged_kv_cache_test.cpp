// The paged KV cache against oracles: exact block counts and reference counts, rows read back
// bitwise as written (float, and q8_0 as quantize_row_q8_0 makes them), copy-on-write that keeps
// every sequence's rows, the strong guarantee when the pool is exhausted, prefix caching that
// attaches exactly the matching full blocks, LRU eviction, memory that grows with use. The decoder
// on paged sequences is tested in paged_kv_cache_decoder_test.cpp.
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/detail/splitmix64.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace nexttok {
namespace {

static_assert(kv_storage<paged_sequence<paged_kv_cache<float>>, float>);
static_assert(kv_storage<paged_sequence<paged_kv_cache<Eigen::half>>, Eigen::half>);
static_assert(kv_storage<paged_sequence<q8_0_paged_kv_cache<float>>, float>);

// 2 layers, rows of 32 values (2 key/value heads of 16), 256 positions.
const kv_shape shape{2, 2, 16, 256};

// A deterministic pseudo-random row in [-1, 1) for each (tag, layer, position, key or value), so
// that every row differs from every other, also after q8_0 quantization.
std::vector<float> source_row(int tag, std::int64_t layer, std::int64_t pos, bool is_value) {
    std::vector<float> r(static_cast<std::size_t>(shape.kv_dim()));
    std::uint64_t state = (static_cast<std::uint64_t>(tag) << 40) ^ (static_cast<std::uint64_t>(layer) << 32) ^
                          (static_cast<std::uint64_t>(pos) << 1) ^ (is_value ? 1u : 0u);
    for (float& x : r)
        x = static_cast<float>(detail::splitmix64_next(state) >> 40) / static_cast<float>(1 << 23) - 1.0f;
    return r;
}

// Writes the rows of `tag` at positions [from, to) of s, as the decoder does (store_kv_row).
template <class Cache>
void write_rows(Cache& c, seq_id s, std::int64_t from, std::int64_t to, int tag) {
    for (std::int64_t l = 0; l < shape.n_layers; ++l)
        for (std::int64_t p = from; p < to; ++p) {
            store_kv_row(source_row(tag, l, p, false).data(), c.key(s, l, p), shape.kv_dim());
            store_kv_row(source_row(tag, l, p, true).data(), c.value(s, l, p), shape.kv_dim());
        }
}

// Whether positions [from, to) of s hold exactly the rows of `tag` (converted as store_kv_row does).
template <class Cache>
::testing::AssertionResult rows_are(const Cache& c, seq_id s, std::int64_t from, std::int64_t to, int tag) {
    using element = typename Cache::element_type;
    std::vector<element> expected(static_cast<std::size_t>(shape.kv_dim() / Cache::values_per_element));
    const std::size_t n = expected.size() * sizeof(element);
    for (std::int64_t l = 0; l < shape.n_layers; ++l)
        for (std::int64_t p = from; p < to; ++p)
            for (bool is_value : {false, true}) {
                store_kv_row(source_row(tag, l, p, is_value).data(), expected.data(), shape.kv_dim());
                const element* got = is_value ? c.value(s, l, p) : c.key(s, l, p);
                if (std::memcmp(got, expected.data(), n) != 0)
                    return ::testing::AssertionFailure() << "sequence " << s << " layer " << l << " position " << p
                                                         << (is_value ? " value" : " key") << " is not tag " << tag;
            }
    return ::testing::AssertionSuccess();
}

std::vector<std::int32_t> table(const auto& c, seq_id s) {
    const auto t = c.block_table(s);
    return {t.begin(), t.end()};
}

template <class Cache>
class paged_typed : public ::testing::Test {};
using cache_types = ::testing::Types<paged_kv_cache<float>, q8_0_paged_kv_cache<float>>;
TYPED_TEST_SUITE(paged_typed, cache_types);

TYPED_TEST(paged_typed, reserve_takes_ceil_n_over_block_size_blocks) {
    TypeParam c(shape, {.n_blocks = 64, .block_size = 16});
    const seq_id s = c.create();
    EXPECT_EQ(c.size(s), 0);
    EXPECT_EQ(c.blocks_needed(s, 100), 7);
    for (std::int64_t n : {1, 15, 16, 17, 100}) {
        c.reserve(s, n);
        EXPECT_EQ(c.size(s), n);
        EXPECT_EQ(c.sequence_blocks(s), (n + 15) / 16) << n;
        EXPECT_EQ(c.n_used_blocks(), (n + 15) / 16) << n;
        EXPECT_EQ(c.n_free_blocks(), 64 - (n + 15) / 16) << n;
    }
    c.reserve(s, 50);  // never shrinks
    EXPECT_EQ(c.size(s), 100);
    EXPECT_EQ(c.blocks_needed(s, 130), 2);
    EXPECT_EQ(c.blocks_needed(s, 80), 0);
    EXPECT_EQ(c.block_bytes(),
              2 * 2 * 16 * (32 / TypeParam::values_per_element) * sizeof(typename TypeParam::element_type));
    EXPECT_EQ(c.bytes_in_use(), 7 * c.block_bytes());
}

TYPED_TEST(paged_typed, rows_read_back_exactly_across_interleaved_sequences) {
    for (std::int64_t bs : {1, 5, 16}) {
        TypeParam c(shape, {.n_blocks = 3 * (50 + bs - 1) / bs, .block_size = bs});
        const seq_id s[3] = {c.create(), c.create(), c.create()};
        for (std::int64_t pos = 0; pos < 50; pos += 5)
            for (int k = 0; k < 3; ++k) {
                c.reserve(s[k], pos + 5);
                write_rows(c, s[k], pos, pos + 5, k + 1);
            }
        for (int k = 0; k < 3; ++k) EXPECT_TRUE(rows_are(c, s[k], 0, 50, k + 1)) << "block size " << bs;
        EXPECT_EQ(c.n_used_blocks(), 3 * ((50 + bs - 1) / bs));
    }
}

TYPED_TEST(paged_typed, fork_shares_blocks_and_copy_on_write_separates_new_rows) {
    TypeParam c(shape, {.n_blocks = 16, .block_size = 8});
    const seq_id a = c.create();
    c.reserve(a, 20);  // blocks of 8, 8 and 4 positions
    write_rows(c, a, 0, 20, 1);
    const seq_id b = c.fork(a);
    EXPECT_EQ(c.size(b), 20);
    EXPECT_EQ(c.n_used_blocks(), 3) << "fork copies nothing";
    EXPECT_EQ(table(c, b), table(c, a));
    for (std::int32_t blk : c.block_table(a)) EXPECT_EQ(c.ref_count(blk), 2);

    // b appends into the shared partly filled block: it gets its own copy of it.
    EXPECT_EQ(c.blocks_needed(b, 21), 1);
    c.reserve(b, 21);
    EXPECT_EQ(c.n_used_blocks(), 4);
    const auto ta = table(c, a), tb = table(c, b);
    EXPECT_EQ(ta[0], tb[0]);
    EXPECT_EQ(ta[1], tb[1]);
    EXPECT_NE(ta[2], tb[2]);
    EXPECT_EQ(c.ref_count(ta[2]), 1);
    EXPECT_EQ(c.ref_count(tb[2]), 1);
    write_rows(c, b, 20, 21, 2);
    EXPECT_TRUE(rows_are(c, a, 0, 20, 1));
    EXPECT_TRUE(rows_are(c, b, 0, 20, 1)) << "the copy holds the rows written before the fork";
    EXPECT_TRUE(rows_are(c, b, 20, 21, 2));

    // a's last block is its own now: written in place.
    EXPECT_EQ(c.blocks_needed(a, 21), 0);
    c.reserve(a, 21);
    write_rows(c, a, 20, 21, 3);
    EXPECT_EQ(table(c, a), ta);
    EXPECT_TRUE(rows_are(c, a, 20, 21, 3));
    EXPECT_TRUE(rows_are(c, b, 20, 21, 2));

    // A fork at a block boundary needs no copy, only a new block.
    const seq_id d = c.create();
    c.reserve(d, 16);
    write_rows(c, d, 0, 16, 4);
    const seq_id e = c.fork(d);
    EXPECT_EQ(c.blocks_needed(e, 17), 1);
    c.reserve(e, 17);
    EXPECT_EQ(table(c, e)[1], table(c, d)[1]);
    EXPECT_TRUE(rows_are(c, e, 0, 16, 4));
}

TYPED_TEST(paged_typed, exhausted_pool_throws_and_changes_nothing) {
    TypeParam c(shape, {.n_blocks = 4, .block_size = 4, .max_seq_len = 32});
    const seq_id a = c.create(), b = c.create();
    c.reserve(a, 10);  // 3 blocks
    write_rows(c, a, 0, 10, 1);
    c.reserve(b, 3);  // 1 block, partly filled
    write_rows(c, b, 0, 3, 2);
    ASSERT_EQ(c.n_free_blocks(), 0);
    const auto ta = table(c, a), tb = table(c, b);

    EXPECT_TRUE(c.can_reserve(a, 12));
    EXPECT_FALSE(c.can_reserve(a, 13));
    try {
        c.reserve(a, 13);
        FAIL() << "reserve succeeded without a free block";
    } catch (const cache_full_error& e) {
        const std::string m = e.what();
        for (const char* part : {"sequence 0", "13 positions", "need 1 more blocks", "0 free of 4"})
            EXPECT_NE(m.find(part), std::string::npos) << m << "\n  lacks: " << part;
    }
    EXPECT_EQ(c.size(a), 10);
    EXPECT_EQ(table(c, a), ta);
    EXPECT_EQ(table(c, b), tb);
    EXPECT_EQ(c.n_used_blocks(), 4);
    EXPECT_TRUE(rows_are(c, a, 0, 10, 1));
    EXPECT_TRUE(rows_are(c, b, 0, 3, 2));

    // A copy-on-write that cannot get its block: the fork stays on the shared block.
    const seq_id f = c.fork(b);
    EXPECT_EQ(c.blocks_needed(f, 4), 1);
    EXPECT_THROW(c.reserve(f, 4), cache_full_error);
    EXPECT_EQ(c.size(f), 3);
    EXPECT_EQ(table(c, f), tb);
    EXPECT_EQ(c.ref_count(tb[0]), 2);
    EXPECT_TRUE(rows_are(c, f, 0, 3, 2));

    // Within the last block no block is needed.
    c.reserve(a, 12);
    EXPECT_EQ(table(c, a), ta);

    // Beyond max_seq_len, whatever the pool holds.
    c.release(b);
    c.release(f);
    try {
        c.reserve(a, 33);
        FAIL() << "reserve beyond max_seq_len succeeded";
    } catch (const cache_full_error& e) {
        EXPECT_NE(std::string(e.what()).find("33 positions exceed max_seq_len 32"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(c.can_reserve(a, 33));
    EXPECT_EQ(c.size(a), 12);
}

TEST(paged_kv_cache, truncate_and_release_return_blocks) {
    paged_kv_cache<float> c(shape, {.n_blocks = 10, .block_size = 16});
    const seq_id a = c.create();
    c.reserve(a, 40);
    EXPECT_EQ(c.n_used_blocks(), 3);
    c.truncate(a, 17);
    EXPECT_EQ(c.size(a), 17);
    EXPECT_EQ(c.sequence_blocks(a), 2);
    EXPECT_EQ(c.n_used_blocks(), 2);
    c.truncate(a, 16);
    EXPECT_EQ(c.n_used_blocks(), 1);
    c.truncate(a, 30);  // no-op: truncation never grows
    EXPECT_EQ(c.size(a), 16);

    const seq_id b = c.fork(a);
    c.truncate(b, 0);  // the shared block stays held by a
    EXPECT_EQ(c.n_used_blocks(), 1);
    EXPECT_EQ(c.ref_count(c.block_table(a)[0]), 1);
    c.release(b);
    EXPECT_FALSE(c.contains(b));
    c.release(a);
    EXPECT_EQ(c.n_used_blocks(), 0);
    EXPECT_EQ(c.n_cached_blocks(), 0) << "nothing was published";
    EXPECT_EQ(c.n_free_blocks(), 10);
    EXPECT_EQ(c.peak_used_blocks(), 3);
    EXPECT_EQ(c.n_sequences(), 0);
    EXPECT_THROW(c.size(a), invalid_argument_error);
    EXPECT_THROW(c.truncate(c.create(), -1), invalid_argument_error);
}

TEST(paged_kv_cache, rewrite_after_truncate_never_changes_a_published_block) {
    paged_kv_cache<float> c(shape, {.n_blocks = 16, .block_size = 4});
    std::vector<token_id> t(12);
    for (int i = 0; i < 12; ++i) t[static_cast<std::size_t>(i)] = 100 + i;
    const seq_id a = c.create();
    c.reserve(a, 12);
    write_rows(c, a, 0, 12, 1);
    c.publish(a, t);
    EXPECT_EQ(c.n_registered_blocks(), 3);

    // b attached a's blocks; a rolls back into its second block and writes something else there.
    const seq_id b = c.create();
    EXPECT_EQ(c.attach_prefix(b, t), 12);
    c.truncate(a, 6);
    EXPECT_EQ(c.blocks_needed(a, 8), 1) << "the registered, shared block must be copied";
    c.reserve(a, 8);
    write_rows(c, a, 6, 8, 9);
    EXPECT_TRUE(rows_are(c, a, 0, 6, 1));
    EXPECT_TRUE(rows_are(c, a, 6, 8, 9));
    EXPECT_TRUE(rows_are(c, b, 0, 12, 1));

    // Registered but held by one sequence only: still copied, so a later attach sees the original.
    c.release(b);
    c.truncate(a, 2);
    EXPECT_EQ(c.ref_count(c.block_table(a)[0]), 1);
    EXPECT_EQ(c.blocks_needed(a, 3), 1);
    c.reserve(a, 3);
    write_rows(c, a, 2, 3, 7);
    const seq_id d = c.create();
    EXPECT_EQ(c.attach_prefix(d, t), 12);
    EXPECT_TRUE(rows_are(c, d, 0, 12, 1));
}

TEST(paged_kv_cache, attach_prefix_reuses_exactly_the_matching_full_blocks) {
    paged_kv_cache<float> c(shape, {.n_blocks = 32, .block_size = 4});
    std::vector<token_id> t(14);
    for (int i = 0; i < 14; ++i) t[static_cast<std::size_t>(i)] = 1 + i;
    const seq_id a = c.create();
    c.reserve(a, 14);
    write_rows(c, a, 0, 14, 1);
    c.publish(a, t);
    EXPECT_EQ(c.n_registered_blocks(), 3) << "the partly filled fourth block is not registered";
    const auto ta = table(c, a);

    EXPECT_EQ(c.match_prefix(t).positions, 12) << "what attach_prefix will attach";
    EXPECT_EQ(c.match_prefix(t).cached_blocks, 0) << "all three are held by a";
    EXPECT_EQ(c.prefix_hit_blocks(), 0) << "a query counts nothing";
    const seq_id b = c.create();
    EXPECT_EQ(c.attach_prefix(b, t), 12);
    EXPECT_EQ(c.size(b), 12);
    EXPECT_EQ(table(c, b), std::vector<std::int32_t>(ta.begin(), ta.begin() + 3));
    EXPECT_EQ(c.ref_count(ta[0]), 2);
    EXPECT_EQ(c.n_used_blocks(), 4) << "attaching takes no block";
    EXPECT_EQ(c.prefix_hit_blocks(), 3);
    EXPECT_TRUE(rows_are(c, b, 0, 12, 1));

    auto second_differs = t;
    second_differs[5] = 999;
    const seq_id d = c.create();
    EXPECT_EQ(c.attach_prefix(d, second_differs), 4);
    EXPECT_EQ(c.prefix_hit_blocks(), 4);
    const seq_id e = c.create();
    EXPECT_EQ(c.attach_prefix(e, std::span<const token_id>(t).first(7)), 4) << "a partial block is never attached";
    auto first_differs = t;
    first_differs[0] = 999;  // blocks 2 and 3 match by tokens but not by parent chain
    const seq_id f = c.create();
    EXPECT_EQ(c.attach_prefix(f, first_differs), 0);
    EXPECT_EQ(c.prefix_hit_blocks(), 5);
    EXPECT_THROW(c.attach_prefix(b, t), invalid_argument_error) << "b is not empty";
    EXPECT_THROW(c.publish(e, t), invalid_argument_error) << "more tokens than positions";

    // Released, the registered blocks stay cached and are attached again, with their rows.
    for (seq_id s : {a, b, d, e, f}) c.release(s);
    EXPECT_EQ(c.n_used_blocks(), 0);
    EXPECT_EQ(c.n_cached_blocks(), 3);
    EXPECT_EQ(c.n_free_blocks(), 32);
    EXPECT_EQ(c.match_prefix(t).positions, 12);
    EXPECT_EQ(c.match_prefix(t).cached_blocks, 3) << "attaching them takes them out of the free blocks";
    const seq_id g = c.create();
    EXPECT_EQ(c.attach_prefix(g, t), 12);
    EXPECT_EQ(table(c, g), std::vector<std::int32_t>(ta.begin(), ta.begin() + 3));
    EXPECT_EQ(c.n_cached_blocks(), 0);
    EXPECT_EQ(c.n_used_blocks(), 3);
    EXPECT_TRUE(rows_are(c, g, 0, 12, 1));

    // A sequence that computed the same blocks itself does not register duplicates.
    const seq_id h = c.create();
    c.reserve(h, 12);
    write_rows(c, h, 0, 12, 5);
    c.publish(h, std::span<const token_id>(t).first(12));
    EXPECT_EQ(c.n_registered_blocks(), 3);
    c.release(h);
    const seq_id k = c.create();
    EXPECT_EQ(c.attach_prefix(k, t), 12);
    EXPECT_TRUE(rows_are(c, k, 0, 12, 1));
}

TEST(paged_kv_cache, prefix_caching_off_attaches_nothing) {
    paged_kv_cache<float> c(shape, {.n_blocks = 8, .block_size = 4, .prefix_caching = false});
    const std::vector<token_id> t{1, 2, 3, 4, 5, 6, 7, 8};
    const seq_id a = c.create();
    c.reserve(a, 8);
    c.publish(a, t);
    EXPECT_EQ(c.n_registered_blocks(), 0);
    EXPECT_EQ(c.attach_prefix(c.create(), t), 0);
    c.release(a);
    EXPECT_EQ(c.n_cached_blocks(), 0);
    EXPECT_EQ(c.n_used_blocks(), 0);
}

TEST(paged_kv_cache, eviction_is_lru_children_first_and_only_when_nothing_is_free) {
    paged_kv_cache<float> c(shape, {.n_blocks = 6, .block_size = 2});
    const std::vector<token_id> ta{1, 2, 3, 4}, tb{5, 6, 7, 8};
    const auto run = [&](const std::vector<token_id>& t) {
        const seq_id s = c.create();
        c.reserve(s, 4);
        c.publish(s, t);
        const auto blocks = table(c, s);
        c.release(s);
        return blocks;
    };
    const auto a = run(ta);  // LRU, oldest first: a[1], a[0]
    const auto b = run(tb);  // ..., b[1], b[0]
    EXPECT_EQ(c.n_cached_blocks(), 4);
    EXPECT_EQ(c.n_free_blocks(), 6);

    const seq_id s = c.create();
    c.reserve(s, 4);  // the two never-used blocks: nothing evicted
    EXPECT_EQ(c.n_cached_blocks(), 4);
    c.reserve(s, 6);  // evicts the oldest: a's second block
    EXPECT_EQ(c.n_cached_blocks(), 3);
    EXPECT_EQ(c.block_table(s)[2], a[1]);
    const seq_id p = c.create();
    EXPECT_EQ(c.attach_prefix(p, ta), 2) << "a's first block survives";
    c.release(p);  // a[0] is now the most recently used: LRU b[1], b[0], a[0]
    c.reserve(s, 8);
    EXPECT_EQ(c.block_table(s)[3], b[1]);
    const seq_id q = c.create();
    EXPECT_EQ(c.attach_prefix(q, tb), 2);
    c.release(q);  // LRU a[0], b[0]
    c.reserve(s, 10);
    EXPECT_EQ(c.block_table(s)[4], a[0]);
    const seq_id r = c.create();
    EXPECT_EQ(c.attach_prefix(r, ta), 0);
    EXPECT_EQ(c.attach_prefix(c.create(), tb), 2);
}

TEST(paged_kv_cache, sixteen_sequences_of_100_positions_hold_16_times_7_blocks) {
    paged_kv_cache<float> c(shape, {.n_blocks = 200, .block_size = 16});
    std::vector<seq_id> s;
    for (int i = 0; i < 16; ++i) s.push_back(c.create());
    for (std::int64_t pos = 0; pos < 100; pos += 10)  // decode-like growth, interleaved
        for (seq_id id : s) c.reserve(id, pos + 10);
    EXPECT_EQ(c.n_used_blocks(), 16 * 7);
    EXPECT_EQ(c.peak_used_blocks(), 16 * 7);
    EXPECT_EQ(c.bytes_in_use(), 16 * 7 * c.block_bytes());
    EXPECT_EQ(c.block_bytes(), std::size_t{2 * 2 * 16 * 32 * 4});
    EXPECT_EQ(c.sequence(s[3]).bytes(), 7 * c.block_bytes());
}

TEST(paged_kv_cache, bytes_grow_with_use_in_slabs_and_freed_blocks_are_reused_first) {
    const kv_shape big{4, 4, 64, 2048};  // blocks of 64 positions: 2 * 4 * 64 * 256 * 4 = 512 KiB
    paged_kv_cache<float> c(big, {.n_blocks = 20, .block_size = 64});
    ASSERT_EQ(c.block_bytes(), std::size_t{512} << 10);
    ASSERT_EQ(c.blocks_per_slab(), 8);  // 4 MiB slabs
    EXPECT_EQ(c.bytes(), 0u);
    const seq_id s = c.create();
    for (std::int64_t k = 1; k <= 20; ++k) {
        c.reserve(s, k * 64);
        EXPECT_EQ(c.bytes(), static_cast<std::size_t>(std::min<std::int64_t>((k + 7) / 8 * 8, 20)) * c.block_bytes())
            << k;
    }
    c.truncate(s, 64 * 3);
    const seq_id t = c.create();
    c.reserve(t, 64 * 17);
    EXPECT_EQ(c.bytes(), 20 * c.block_bytes()) << "never beyond the pool";
    c.release(s);
    c.release(t);

    paged_kv_cache<float> d(big, {.n_blocks = 20, .block_size = 64});
    const seq_id u = d.create();
    d.reserve(u, 64 * 8);
    d.release(u);
    const seq_id v = d.create();
    d.reserve(v, 64 * 8);
    EXPECT_EQ(d.bytes(), 8 * d.block_bytes()) << "freed blocks come back before new memory";
    for (std::int32_t b : d.block_table(v)) EXPECT_LT(b, 8);
}

TEST(paged_kv_cache, bad_options_and_ids_throw_invalid_argument_naming_the_field) {
    const auto message = [](auto make) {
        try {
            make();
        } catch (const invalid_argument_error& e) {
            return std::string(e.what());
        }
        return std::string("no exception");
    };
    EXPECT_NE(message([] { paged_kv_cache<float>(shape, {.n_blocks = 0}); }).find("options.n_blocks is 0"),
              std::string::npos);
    EXPECT_NE(
        message([] { paged_kv_cache<float>(shape, {.n_blocks = 4, .block_size = 0}); }).find("options.block_size is 0"),
        std::string::npos);
    EXPECT_NE(message([] {
                  paged_kv_cache<float>(shape, {.n_blocks = 4, .max_seq_len = -1});
              }).find("options.max_seq_len is -1"),
              std::string::npos);
    EXPECT_NE(message([] {
                  q8_0_paged_kv_cache<float>(kv_shape{2, 3, 16, 64}, {.n_blocks = 4});
              }).find("48 values"),
              std::string::npos);
    EXPECT_NE(message([] {
                  paged_kv_cache<float>(kv_shape{0, 2, 16, 64}, {.n_blocks = 4});
              }).find("n_layers 0"),
              std::string::npos);
    paged_kv_cache<float> c(shape, {.n_blocks = 4});
    EXPECT_EQ(c.max_seq_len(), 256) << "0 takes the shape's";
    EXPECT_NE(message([&] { c.reserve(7, 1); }).find("reserve: no sequence 7"), std::string::npos);
    EXPECT_THROW(c.fork(0), invalid_argument_error);
    EXPECT_THROW(c.sequence(-1), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok
