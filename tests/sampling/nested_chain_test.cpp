// A chain used as a processor of another chain (sampler_chain and dynamic_chain, nested in each other).
// The oracle is the flat chain of the same stages in the same order: for the same logits it must leave
// bitwise the same candidates to the selector, draw the same tokens for a fixed seed and report the
// same log-probabilities, through accepted prompt tokens (include_prompt = false penalties, so a
// nested stage that missed an accept() would penalize differently) and a reset() halfway.
#include <nexttok/sampling/any_processor.hpp>
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/dynamic_chain.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/min_p.hpp>
#include <nexttok/sampling/penalties.hpp>
#include <nexttok/sampling/sampler_chain.hpp>
#include <nexttok/sampling/temperature.hpp>
#include <nexttok/sampling/top_k.hpp>
#include <nexttok/sampling/top_p.hpp>
#include <nexttok/sampling/xtc.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nexttok {
namespace {

constexpr std::uint64_t nested_seed = 1234;
constexpr std::size_t nested_vocab = 96;

// The stages, made fresh for each chain (equal state at the start).
penalties nested_penalties() { return penalties(16, 1.3f, 0.2f, 0.1f, /*include_prompt=*/false); }
top_k nested_top_k() { return top_k(40); }
top_p nested_top_p() { return top_p(0.9f); }
temperature nested_temperature() { return temperature(0.7f); }
min_p nested_min_p() { return min_p(0.02f); }
xtc nested_xtc() { return xtc(0.5f, 0.05f, 1, 99); }

static_assert(logits_processor<sampler_chain<top_k, greedy>>);
static_assert(logits_processor<dynamic_chain>);
static_assert(sampler<sampler_chain<sampler_chain<top_k, greedy>, categorical>>);

std::vector<std::uint32_t> bits_of(std::span<const float> values) {
    std::vector<std::uint32_t> bits;
    for (const float v : values) bits.push_back(std::bit_cast<std::uint32_t>(v));
    return bits;
}

// The candidate sets are the same entry for entry, bit for bit.
void expect_same_candidates(const candidates& nested, const candidates& flat) {
    EXPECT_EQ(nested.ids, flat.ids);
    EXPECT_EQ(bits_of(nested.logits), bits_of(flat.logits));
    EXPECT_EQ(nested.sorted, flat.sorted);
    ASSERT_EQ(nested.probs_valid, flat.probs_valid);
    if (flat.probs_valid) {
        EXPECT_EQ(bits_of(nested.probs), bits_of(flat.probs));
    }
}

// The same prompt, then n_steps samples of fresh logits (some of them with ties), a reset() of both
// and the same again: each step the same token, log-probability and candidate set.
template <class Nested, class Flat>
void expect_same_run(Nested& nested, Flat& flat, int n_steps = 40) {
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round == 0 ? "before reset()" : "after reset()");
        for (const token_id t : {token_id{3}, token_id{5}, token_id{3}, token_id{60}}) {
            nested.accept(t);
            flat.accept(t);
        }
        test::logit_source source(7);
        for (int step = 0; step < n_steps; ++step) {
            SCOPED_TRACE(step);
            const std::vector<float> logits =
                step % 4 == 3 ? source.tied_logits(nested_vocab, 5) : source.logits(nested_vocab);
            const token_id from_nested = nested.sample(logits);
            ASSERT_EQ(from_nested, flat.sample(logits));
            EXPECT_EQ(std::bit_cast<std::uint32_t>(nested.last_logprob()),
                      std::bit_cast<std::uint32_t>(flat.last_logprob()));
            expect_same_candidates(nested.last_candidates(), flat.last_candidates());
        }
        nested.reset();
        flat.reset();
    }
}

auto flat_static_chain() {
    return make_sampler_chain(nested_penalties(), nested_top_k(), nested_top_p(), nested_temperature(), nested_min_p(),
                              categorical{nested_seed});
}

TEST(nested_chain, static_chain_in_a_static_chain_gives_the_flat_chain) {
    auto inner = make_sampler_chain(nested_top_k(), nested_top_p(), nested_temperature(), greedy{});
    auto nested = make_sampler_chain(nested_penalties(), inner, nested_min_p(), categorical{nested_seed});
    auto flat = flat_static_chain();
    expect_same_run(nested, flat);
}

TEST(nested_chain, dynamic_chain_in_a_static_chain_gives_the_flat_chain) {
    // The penalties inside the nested chain: they see the prompt only through the outer accept().
    dynamic_chain inner({nested_penalties(), nested_top_k(), nested_top_p()}, greedy{});
    auto nested = make_sampler_chain(inner, nested_temperature(), nested_min_p(), categorical{nested_seed});
    auto flat = flat_static_chain();
    expect_same_run(nested, flat);
}

TEST(nested_chain, static_chain_in_a_dynamic_chain_gives_the_flat_chain) {
    auto inner = make_sampler_chain(nested_penalties(), nested_top_k(), nested_top_p(), greedy{});
    dynamic_chain nested({inner, nested_temperature(), nested_min_p()}, categorical{nested_seed});
    dynamic_chain flat({nested_penalties(), nested_top_k(), nested_top_p(), nested_temperature(), nested_min_p()},
                       categorical{nested_seed});
    expect_same_run(nested, flat);
}

TEST(nested_chain, dynamic_chain_in_a_dynamic_chain_gives_the_flat_chain) {
    dynamic_chain inner({nested_top_k(), nested_top_p(), nested_temperature()}, greedy{});
    dynamic_chain nested({nested_penalties(), inner, nested_min_p()}, categorical{nested_seed});
    dynamic_chain flat({nested_penalties(), nested_top_k(), nested_top_p(), nested_temperature(), nested_min_p()},
                       categorical{nested_seed});
    expect_same_run(nested, flat);
}

TEST(nested_chain, three_levels_alternating_static_and_dynamic_give_the_flat_chain) {
    auto innermost = make_sampler_chain(nested_top_p(), nested_temperature(), greedy{});
    dynamic_chain middle({nested_penalties(), nested_top_k(), innermost}, greedy{});
    auto nested = make_sampler_chain(middle, nested_min_p(), categorical{nested_seed});
    auto flat = flat_static_chain();
    expect_same_run(nested, flat);
}

TEST(nested_chain, nested_chain_applied_alone_is_its_processors_in_order) {
    test::logit_source source(11);
    const std::vector<float> logits = source.logits(nested_vocab);
    auto as_static = make_sampler_chain(nested_top_k(), nested_top_p(), nested_temperature(), greedy{});
    dynamic_chain as_dynamic({nested_top_k(), nested_top_p(), nested_temperature()}, greedy{});
    candidates expected, from_static, from_dynamic;
    expected.assign(logits);
    nested_top_k().apply(expected);
    nested_top_p().apply(expected);
    nested_temperature().apply(expected);
    from_static.assign(logits);
    as_static.apply(from_static);
    from_dynamic.assign(logits);
    as_dynamic.apply(from_dynamic);
    expect_same_candidates(from_static, expected);
    expect_same_candidates(from_dynamic, expected);
    // apply() is not sample(): nothing selected, nothing recorded as the last sample.
    EXPECT_TRUE(as_static.last_candidates().empty());
    EXPECT_TRUE(as_dynamic.last_candidates().empty());
    EXPECT_EQ(as_static.last_logprob(), 0.0f);
}

TEST(nested_chain, distribution_is_that_of_the_flat_chain) {
    test::logit_source source(13);
    const std::vector<float> logits = source.logits(nested_vocab);
    auto inner = make_sampler_chain(nested_top_k(), nested_top_p(), greedy{});
    dynamic_chain nested({nested_penalties(), inner, nested_temperature(), nested_min_p()}, categorical{nested_seed});
    auto flat = flat_static_chain();
    ASSERT_TRUE(nested.has_distribution());
    const token_distribution a = nested.distribution(logits);
    const token_distribution b = flat.distribution(logits);
    EXPECT_EQ(std::vector<token_id>(a.ids.begin(), a.ids.end()), std::vector<token_id>(b.ids.begin(), b.ids.end()));
    EXPECT_EQ(bits_of(a.probs), bits_of(b.probs));
}

// XTC draws from its own stream (its seed), so nested it draws what it draws flat; and a chain holding
// it, at any depth, reports that it draws random numbers and cannot state its distribution.
TEST(nested_chain, a_nested_processor_that_draws_random_numbers_is_reported_and_reproduced) {
    dynamic_chain inner({nested_top_k(), nested_xtc()}, greedy{});
    auto nested = make_sampler_chain(nested_penalties(), inner, nested_temperature(), categorical{nested_seed});
    auto flat = make_sampler_chain(nested_penalties(), nested_top_k(), nested_xtc(), nested_temperature(),
                                   categorical{nested_seed});
    expect_same_run(nested, flat);

    EXPECT_TRUE(inner.draws_random_numbers());
    EXPECT_FALSE(inner.has_distribution());
    EXPECT_TRUE(nested.draws_random_numbers());
    const std::vector<float> logits(nested_vocab, 0.5f);
    EXPECT_THROW(nested.distribution(logits), unsupported_error);  // has_distribution() is decided at compile time
    EXPECT_TRUE(any_processor(nested).draws_random_numbers());

    dynamic_chain outer({nested_top_p(), nested}, greedy{});
    EXPECT_FALSE(outer.has_distribution());
    EXPECT_THROW(outer.distribution(logits), unsupported_error);

    auto static_xtc = make_sampler_chain(nested_top_k(), nested_xtc(), greedy{});
    EXPECT_TRUE(static_xtc.draws_random_numbers());
    dynamic_chain holding_static({static_xtc}, greedy{});
    EXPECT_FALSE(holding_static.has_distribution());

    dynamic_chain without({nested_top_k()}, greedy{});
    EXPECT_FALSE(without.draws_random_numbers());
    EXPECT_FALSE(make_sampler_chain(without, greedy{}).draws_random_numbers());
}

}  // namespace
}  // namespace nexttok
