// generate()'s streaming with stop strings, on a scripted decoder and a hand-made vocabulary, so that
// every token and byte is known: stop strings split over 2 and 3 tokens, overlapping partial matches,
// multi-byte characters spelled with byte-fallback tokens, and the rule that the user never sees a
// held-back prefix that turned into a stop string (checked after every event, and on random scripts
// against an oracle that decodes the whole token sequence).
#include <nexttok/detail/utf8.hpp>
#include <nexttok/generation.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/stopping.hpp>

#include "generation_test_util.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace nexttok {
namespace {

struct streamed_run {
    generation_result result;
    std::vector<std::string> events;  // the text of each event, in order
};

// Greedy generation of `script` after a BOS prompt, with the given stop strings, collecting the stream.
// After every event the text shown so far must be a prefix of the final text (nothing shown is ever
// taken back) and valid UTF-8 (no half character).
streamed_run run_script(const tokenizer& tok, const std::vector<token_id>& script, std::vector<std::string> stops,
                        bool include = false, std::int64_t max_new = 64) {
    test::scripted_decoder dec(static_cast<std::int64_t>(tok.vocab_size()), 1, script);
    kv_cache<float> cache(dec.config(), 64);
    auto sampler = make_sampler_chain(greedy{});
    any_of stop(eos_criterion{test::eos_id}, max_new_tokens(max_new), stop_strings(std::move(stops), include));
    streamed_run run;
    std::string shown;
    std::vector<std::string> snapshots;
    const std::vector<token_id> prompt{test::bos_id};
    run.result = generate(dec, cache, tok, prompt, sampler, stop, [&](const token_event& e) {
        EXPECT_TRUE(detail::is_valid_utf8(e.text)) << "event " << run.events.size() << " shows half a character";
        run.events.emplace_back(e.text);
        shown += e.text;
        snapshots.push_back(shown);
        return true;
    });
    for (const auto& s : snapshots) EXPECT_EQ(run.result.text.substr(0, s.size()), s) << "shown text was taken back";
    EXPECT_EQ(shown, run.result.text);
    return run;
}

class streaming : public ::testing::Test {
protected:
    const tokenizer tok = test::scripted_tokenizer();
    token_id p(const char* text) const { return test::piece(tok, text); }
    token_id byte(unsigned char b) const { return test::byte_token(tok, b); }
};

TEST_F(streaming, stop_string_split_over_two_tokens) {
    const auto run = run_script(tok, {p("x"), p("E"), p("ND"), p("y")}, {"END"});
    EXPECT_EQ(run.result.reason, finish_reason::stop_string);
    EXPECT_EQ(run.result.text, "x");
    EXPECT_EQ(run.result.tokens, (std::vector<token_id>{p("x"), p("E"), p("ND")}));  // the completing token is kept
    EXPECT_EQ(run.events, (std::vector<std::string>{"x", "", ""}));
}

TEST_F(streaming, stop_string_split_over_three_tokens) {
    const auto run = run_script(tok, {p("Hello"), p("S"), p("TO"), p("P"), p("z")}, {"STOP"});
    EXPECT_EQ(run.result.reason, finish_reason::stop_string);
    EXPECT_EQ(run.result.text, "Hello");
    EXPECT_EQ(run.events, (std::vector<std::string>{"Hello", "", "", ""}));
}

TEST_F(streaming, overlapping_partial_match_releases_only_the_false_start) {
    // "aab" in "aaab": after "a a" both could start it; after the third "a" the first one cannot.
    const auto run = run_script(tok, {p("a"), p("a"), p("a"), p("b"), p("c")}, {"aab"});
    EXPECT_EQ(run.result.reason, finish_reason::stop_string);
    EXPECT_EQ(run.result.text, "a");
    EXPECT_EQ(run.events, (std::vector<std::string>{"", "", "a", ""}));
}

TEST_F(streaming, held_back_text_that_does_not_become_a_stop_string_is_released) {
    const auto run = run_script(tok, {p("S"), p("TO"), p("x"), p("y")}, {"STOP"});
    EXPECT_EQ(run.result.reason, finish_reason::eos);
    EXPECT_EQ(run.result.text, "STOxy");
    EXPECT_EQ(run.events, (std::vector<std::string>{"", "", "STOx", "y", ""}));  // EOS adds no text
}

TEST_F(streaming, text_held_back_when_another_criterion_ends_generation_is_released_at_the_end) {
    const auto run = run_script(tok, {p("x"), p("S"), p("TO"), p("P")}, {"STOP"}, false, 3);
    EXPECT_EQ(run.result.reason, finish_reason::max_new_tokens);
    EXPECT_EQ(run.result.text, "xSTO");
    EXPECT_EQ(run.events, (std::vector<std::string>{"x", "", "STO"}));
}

TEST_F(streaming, include_stop_string_keeps_it_and_drops_what_follows_in_the_same_token) {
    const auto run = run_script(tok, {p("x"), p("ST"), p("OP"), p("y")}, {"STO"}, true);
    EXPECT_EQ(run.result.reason, finish_reason::stop_string);
    EXPECT_EQ(run.result.text, "xSTO");  // "P" of the last token is after the stop string
}

TEST_F(streaming, multi_byte_characters_split_over_byte_tokens) {
    // x 日 本 y, each CJK character spelled with three byte-fallback tokens.
    const std::vector<token_id> script{p("x"),     byte(0xE6), byte(0x97), byte(0xA5),
                                       byte(0xE6), byte(0x9C), byte(0xAC), p("y")};
    const std::string ri = "\xE6\x97\xA5", ben = "\xE6\x9C\xAC";
    // No stop string: the character appears with its third byte, never before.
    const auto plain = run_script(tok, script, {});
    EXPECT_EQ(plain.result.text, "x" + ri + ben + "y");
    EXPECT_EQ(plain.events, (std::vector<std::string>{"x", "", "", ri, "", "", ben, "y", ""}));
    // Stop at "本": the text keeps 日.
    const auto at_ben = run_script(tok, script, {ben});
    EXPECT_EQ(at_ben.result.reason, finish_reason::stop_string);
    EXPECT_EQ(at_ben.result.text, "x" + ri);
    // Stop at "日本": 日 is held back (it could start the stop string) and never shown.
    const auto at_both = run_script(tok, script, {ri + ben});
    EXPECT_EQ(at_both.result.text, "x");
    EXPECT_EQ(at_both.events, (std::vector<std::string>{"x", "", "", "", "", "", ""}));
    // A stop string that is not valid UTF-8 could only match inside a character: rejected.
    EXPECT_THROW(run_script(tok, script, {"\xA5\xE6"}), invalid_argument_error);
}

// Oracle: the first token count L at which decode(tokens[:L]) contains a stop string; the text is cut
// at the earliest start among the matches then.
TEST_F(streaming, random_scripts_agree_with_the_decode_oracle) {
    const std::vector<token_id> pieces{p("a"), p("b"), p("aa"), p("ab"), p("c"), byte(0xC3), byte(0xA9)};
    const std::vector<std::string> stops{"aab", "bab", "c\xC3\xA9"};
    std::mt19937 gen(31);
    int stopped = 0;
    for (int round = 0; round < 300; ++round) {
        std::vector<token_id> script(1 + gen() % 20);
        for (auto& t : script) t = pieces[gen() % pieces.size()];
        const auto run = run_script(tok, script, stops);
        std::vector<token_id> prefix{test::bos_id};
        std::string expected_text;
        finish_reason expected_reason = finish_reason::eos;
        for (token_id t : script) {
            prefix.push_back(t);
            const std::string text = tok.decode(prefix);
            std::size_t first = std::string::npos;
            for (const auto& s : stops) first = std::min(first, text.find(s));
            if (first != std::string::npos) {
                expected_text = text.substr(0, first);
                expected_reason = finish_reason::stop_string;
                break;
            }
        }
        if (expected_reason == finish_reason::eos) {
            prefix.push_back(test::eos_id);
            expected_text = tok.decode(prefix);
        }
        ASSERT_EQ(run.result.reason, expected_reason) << "round " << round;
        // decode() keeps raw bytes; the streamed text replaces an unfinished character by U+FFFD.
        if (detail::is_valid_utf8(expected_text)) {
            EXPECT_EQ(run.result.text, expected_text) << "round " << round;
        }
        stopped += expected_reason == finish_reason::stop_string;
    }
    EXPECT_GT(stopped, 100);
}

TEST_F(streaming, generation_options_stop_and_min_new_tokens) {
    // The script wants EOS right away; min_new_tokens 3 masks it for three draws (greedy then takes
    // the lowest id among the tied zeros: <unk>, id 0).
    test::scripted_decoder dec(static_cast<std::int64_t>(tok.vocab_size()), 1, {test::eos_id});
    kv_cache<float> cache(dec.config(), 64);
    generation_options o;
    o.sampling.temperature = 0.0f;
    o.min_new_tokens = 3;
    const std::vector<token_id> prompt{test::bos_id};
    const auto r = generate(dec, cache, tok, prompt, o);
    EXPECT_EQ(r.reason, finish_reason::eos);
    EXPECT_EQ(r.tokens, (std::vector<token_id>{0, 0, 0, test::eos_id}));
    // ignore_eos: EOS is never drawn and never stops; max_new_tokens does.
    generation_options ig;
    ig.sampling.temperature = 0.0f;
    ig.ignore_eos = true;
    ig.max_new_tokens = 5;
    const auto r2 = generate(dec, cache, tok, prompt, ig);
    EXPECT_EQ(r2.reason, finish_reason::max_new_tokens);
    EXPECT_EQ(r2.tokens.size(), 5u);
    for (token_id t : r2.tokens) EXPECT_NE(t, test::eos_id);
    // Stop strings from the options.
    test::scripted_decoder words(static_cast<std::int64_t>(tok.vocab_size()), 1,
                                 {p("Hello"), p(" "), p("E"), p("ND"), p("x")});
    generation_options st;
    st.sampling.temperature = 0.0f;
    st.stop = {"END"};
    const auto r3 = generate(words, cache, tok, prompt, st);
    EXPECT_EQ(r3.reason, finish_reason::stop_string);
    EXPECT_EQ(r3.text, "Hello ");
    // max_length counts the prompt: 1 + 2.
    generation_options ml;
    ml.sampling.temperature = 0.0f;
    ml.max_length = 3;
    EXPECT_EQ(generate(words, cache, tok, prompt, ml).tokens.size(), 2u);
}

TEST_F(streaming, cancellation_and_timeout_from_the_options) {
    const std::vector<token_id> prompt{test::bos_id};
    std::vector<token_id> long_script(40, p("a"));
    test::scripted_decoder dec(static_cast<std::int64_t>(tok.vocab_size()), 1, long_script);
    kv_cache<float> cache(dec.config(), 64);
    // The callback (standing in for another thread) requests a stop after the 5th token's check: the
    // check of the 6th sees it.
    std::stop_source source;
    generation_options o;
    o.sampling.temperature = 0.0f;
    o.cancel = source.get_token();
    const auto r = generate(dec, cache, tok, prompt, o, [&](const token_event& e) {
        if (e.index == 4) source.request_stop();
        return true;
    });
    EXPECT_EQ(r.reason, finish_reason::cancelled);
    EXPECT_EQ(r.tokens.size(), 6u);  // requested during token 4's event, after its check: token 5's check fires
    // A decoder that takes 5 ms per step and a 20 ms budget: stops with "deadline" well before 40 tokens.
    dec.set_sleep(5);
    generation_options t;
    t.sampling.temperature = 0.0f;
    t.timeout = std::chrono::milliseconds(20);
    const auto rt = generate(dec, cache, tok, prompt, t);
    EXPECT_EQ(rt.reason, finish_reason::deadline);
    EXPECT_LT(rt.tokens.size(), 10u);
}

TEST_F(streaming, options_are_validated) {
    test::scripted_decoder dec(static_cast<std::int64_t>(tok.vocab_size()), 1, {});
    kv_cache<float> cache(dec.config(), 64);
    const std::vector<token_id> prompt{test::bos_id};
    generation_options bad;
    bad.stop = {""};
    EXPECT_THROW(generate(dec, cache, tok, prompt, bad), invalid_argument_error);
    generation_options two;
    two.n_samples = 2;
    EXPECT_THROW(generate(dec, cache, tok, prompt, two), invalid_argument_error);
    generation_options neg;
    neg.max_new_tokens = -2;
    EXPECT_THROW(generate(dec, cache, tok, prompt, neg), invalid_argument_error);
}

}  // namespace
}  // namespace nexttok
