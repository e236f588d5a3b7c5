// "No allocation in the token loop": after the first sample() of a vocabulary size, sampling does not
// allocate. Global operator new is replaced in this test program to count allocations.
#include <nexttok/sampling/make_sampler.hpp>
#include <nexttok/sampling/min_new_tokens.hpp>
#include <nexttok/sampling/sampler_chain.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

namespace {
std::atomic<long> n_allocations{0};
}

// GCC pairs ::operator new with free() in its analysis and warns; here both sides are ours (malloc/free).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
    ++n_allocations;
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every allocation that the
// deletes above free must come from malloc, or AddressSanitizer reports a new/free mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    ++n_allocations;
    return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return ::operator new(size, std::nothrow); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace nexttok {
namespace {

template <class Sampler>
long allocations_after_warm_up(Sampler& s, const std::vector<std::vector<float>>& steps) {
    s.sample(steps[0]);
    const long before = n_allocations.load();
    for (const auto& logits : steps) s.sample(logits);
    return n_allocations.load() - before;
}

std::vector<std::vector<float>> vocab_steps() {
    test::logit_source src(91);
    std::vector<std::vector<float>> steps;
    for (int i = 0; i < 20; ++i) steps.push_back(src.logits(32000, -10.0f, 10.0f));
    steps.push_back(std::vector<float>(32000, 1.0f));  // all tied
    return steps;
}

// The pointers escape through volatile stores, so that the optimizer cannot elide the allocations
// (libstdc++'s allocator calls __builtin_operator_new, which it may elide when nothing observes it).
std::vector<int>* volatile escaped_vector = nullptr;
int* volatile escaped_data = nullptr;

TEST(sampling_allocation, counting_allocator_sees_allocations) {
    const long before = n_allocations.load();
    auto* v = new std::vector<int>(100);
    escaped_vector = v;
    escaped_data = v->data();
    delete v;
    EXPECT_GE(n_allocations.load() - before, 2);  // the test can fail
}

TEST(sampling_allocation, default_dynamic_sampler_does_not_allocate_per_token) {
    const auto steps = vocab_steps();
    auto s = make_sampler(sampling_options{});
    EXPECT_EQ(allocations_after_warm_up(s, steps), 0);
}

TEST(sampling_allocation, top_p_over_the_whole_vocabulary_does_not_allocate_per_token) {
    const auto steps = vocab_steps();
    sampling_options o;
    o.top_k = 0;  // top-p sees 32000 unsorted candidates: the adaptive and full sorts
    o.top_p = 0.99f;
    auto s = make_sampler(o);
    EXPECT_EQ(allocations_after_warm_up(s, steps), 0);
}

TEST(sampling_allocation, greedy_and_static_chains_do_not_allocate_per_token) {
    const auto steps = vocab_steps();
    sampling_options o;
    o.temperature = 0.0f;
    auto g = make_sampler(o);
    EXPECT_EQ(allocations_after_warm_up(g, steps), 0);
    auto stat = make_sampler_chain(top_k(40), top_p(0.95f), min_p(0.05f), temperature(0.8f), categorical(1));
    EXPECT_EQ(allocations_after_warm_up(stat, steps), 0);
}

}  // namespace
}  // namespace nexttok

namespace nexttok {
namespace {

// Every stage of the full llama.cpp chain with bounded windows: after the first draws (the vocabulary-
// sized buffers) and once the windows are full, a draw allocates nothing.
TEST(sampling_allocation, full_chain_with_penalties_dry_and_constraints_does_not_allocate_per_token) {
    const auto steps = vocab_steps();
    sampling_options o;
    o.repeat_penalty = 1.2f;
    o.frequency_penalty = 0.1f;
    o.presence_penalty = 0.1f;
    o.repeat_last_n = 16;
    o.dry_multiplier = 0.8f;
    o.dry_penalty_last_n = 16;
    o.typical_p = 0.98f;
    o.top_n_sigma = 3.0f;
    o.xtc_probability = 0.5f;
    o.epsilon_cutoff = 1e-6f;
    o.eta_cutoff = 1e-6f;
    o.no_repeat_ngram_size = 0;  // its context grows with the sequence (documented)
    o.logit_bias = {{5, 1.0f}, {6, -INFINITY}};
    o.banned_sequences = {{7}, {8, 9}};
    auto s = make_sampler(o, {min_new_tokens(1000, {2})});
    for (int warm = 0; warm < 3; ++warm)
        for (const auto& logits : steps) s.sample(logits);  // fill the windows
    EXPECT_EQ(allocations_after_warm_up(s, steps), 0);
}

}  // namespace
}  // namespace nexttok
