// sampler_chain and dynamic_chain: the order of apply / select / accept, reset, last_logprob.
#include <nexttok/sampling/any_sampler.hpp>
#include <nexttok/sampling/categorical.hpp>
#include <nexttok/sampling/dynamic_chain.hpp>
#include <nexttok/sampling/greedy.hpp>
#include <nexttok/sampling/sampler_chain.hpp>
#include <nexttok/sampling/temperature.hpp>
#include <nexttok/sampling/top_k.hpp>
#include <nexttok/sampling/top_p.hpp>

#include "sampling_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// A processor that logs what happens to it (shared log, so copies inside a chain still write here).
struct recording_processor {
    std::string name;
    std::shared_ptr<std::vector<std::string>> log;
    void apply(candidates& c) { log->push_back(name + ".apply(" + std::to_string(c.size()) + ")"); }
    void accept(token_id t) { log->push_back(name + ".accept(" + std::to_string(t) + ")"); }
    void reset() { log->push_back(name + ".reset"); }
};

// A stateless processor (no accept/reset): must still compose.
struct drop_last {
    void apply(candidates& c) const { c.truncate(c.size() - 1); }
};

struct recording_selector {
    std::shared_ptr<std::vector<std::string>> log;
    token_id select(candidates& c) {
        log->push_back("select(" + std::to_string(c.size()) + ")");
        return c.ids[c.argmax()];
    }
    void accept(token_id t) { log->push_back("selector.accept(" + std::to_string(t) + ")"); }
    void reset() { log->push_back("selector.reset"); }
};

static_assert(logits_processor<recording_processor> && accepts_tokens<recording_processor>);
static_assert(logits_processor<drop_last> && !accepts_tokens<drop_last> && !resets_state<drop_last>);
static_assert(token_selector<greedy> && token_selector<categorical> && token_selector<recording_selector>);
static_assert(sampler<sampler_chain<top_k, greedy>>);
static_assert(sampler<dynamic_chain>);
static_assert(sampler<any_sampler>);
static_assert(!sampler<greedy>);

const std::vector<std::string> expected_log{
    "a.apply(5)", "b.apply(4)", "select(4)", "a.accept(1)", "b.accept(1)", "selector.accept(1)",
};
const std::vector<float> five_logits{0.0f, 4.0f, 1.0f, 2.0f, 9.0f};  // drop_last removes id 4

TEST(sampler_chain, applies_in_order_selects_then_accepts_on_every_stage) {
    auto log = std::make_shared<std::vector<std::string>>();
    auto chain = make_sampler_chain(recording_processor{"a", log}, drop_last{}, recording_processor{"b", log},
                                    recording_selector{log});
    // drop_last removes the last of id order (id 4, logit 9): the best remaining is id 1.
    EXPECT_EQ(chain.sample(five_logits), 1);
    EXPECT_EQ(*log, expected_log);
    EXPECT_EQ(chain.last_candidates().size(), 4u);  // what the selector saw

    log->clear();
    chain.accept(17);
    chain.reset();
    EXPECT_EQ(*log, (std::vector<std::string>{"a.accept(17)", "b.accept(17)", "selector.accept(17)", "a.reset",
                                              "b.reset", "selector.reset"}));
}

TEST(sampling_dynamic_chain, applies_in_order_selects_then_accepts_on_every_stage) {
    auto log = std::make_shared<std::vector<std::string>>();
    dynamic_chain chain({recording_processor{"a", log}, drop_last{}, recording_processor{"b", log}},
                        recording_selector{log});
    EXPECT_EQ(chain.n_processors(), 3u);
    EXPECT_EQ(chain.sample(five_logits), 1);
    EXPECT_EQ(*log, expected_log);
    log->clear();
    chain.accept(17);
    chain.reset();
    EXPECT_EQ(*log, (std::vector<std::string>{"a.accept(17)", "b.accept(17)", "selector.accept(17)", "a.reset",
                                              "b.reset", "selector.reset"}));
}

TEST(sampler_chain, empty_logits_are_rejected) {
    auto chain = make_sampler_chain(greedy{});
    EXPECT_THROW(chain.sample({}), invalid_argument_error);
    dynamic_chain dyn({}, greedy{});
    EXPECT_THROW(dyn.sample({}), invalid_argument_error);
}

// last_logprob = log softmax over the survivors of the processed logits, at the chosen token.
TEST(sampler_chain, last_logprob_is_the_log_softmax_of_the_chosen_token_over_the_survivors) {
    test::logit_source src(71);
    auto chain = make_sampler_chain(top_k(5), temperature(0.5f), categorical(1));
    for (int round = 0; round < 50; ++round) {
        const auto logits = src.logits(100);
        const token_id t = chain.sample(logits);
        // Oracle: the 5 best logits, divided by 0.5, softmax in double.
        auto order = test::oracle_order(logits);
        order.resize(5);
        std::vector<float> survivors;
        for (token_id id : order) survivors.push_back(logits[id] / 0.5f);
        const auto probs = test::oracle_softmax(survivors);
        const auto pos = std::find(order.begin(), order.end(), t) - order.begin();
        ASSERT_LT(pos, 5);
        EXPECT_NEAR(chain.last_logprob(), std::log(probs[pos]), 1e-5);
    }
}

TEST(sampler_chain, greedy_over_the_full_vocabulary_reports_the_raw_logprob) {
    const std::vector<float> logits{std::log(0.5f), std::log(0.25f), std::log(0.25f)};
    auto chain = make_sampler_chain(greedy{});
    EXPECT_EQ(chain.sample(logits), 0);
    EXPECT_NEAR(chain.last_logprob(), std::log(0.5), 1e-6);
}

TEST(sampler_chain, one_survivor_has_logprob_zero) {
    auto chain = make_sampler_chain(temperature(0.0f), categorical(3));
    EXPECT_EQ(chain.sample(std::vector<float>{1.0f, 5.0f, 2.0f}), 1);
    EXPECT_EQ(chain.last_logprob(), 0.0f);
}

TEST(sampler_chain, static_and_dynamic_chains_give_identical_tokens_and_logprobs) {
    test::logit_source src(72);
    auto stat = make_sampler_chain(top_k(20), top_p(0.9f), temperature(1.3f), categorical(2024));
    dynamic_chain dyn({top_k(20), top_p(0.9f), temperature(1.3f)}, categorical(2024));
    any_sampler erased(stat);  // a copy: same state, same stream
    for (int step = 0; step < 300; ++step) {
        const auto logits = src.logits(500, -4.0f, 4.0f);
        const token_id a = stat.sample(logits);
        EXPECT_EQ(dyn.sample(logits), a) << "step " << step;
        EXPECT_EQ(erased.sample(logits), a) << "step " << step;
        EXPECT_EQ(dyn.last_logprob(), stat.last_logprob());
        EXPECT_EQ(erased.last_logprob(), stat.last_logprob());
    }
}

TEST(any_sampler, copies_clone_the_state_and_then_evolve_independently) {
    test::logit_source src(73);
    const auto logits = src.logits(50, -1.0f, 1.0f);
    any_sampler a(make_sampler_chain(categorical(5)));
    for (int i = 0; i < 10; ++i) a.sample(logits);
    any_sampler b = a;  // same RNG position
    std::vector<token_id> ta, tb;
    for (int i = 0; i < 50; ++i) ta.push_back(a.sample(logits));
    for (int i = 0; i < 50; ++i) tb.push_back(b.sample(logits));
    EXPECT_EQ(ta, tb);
}

}  // namespace
}  // namespace nexttok
