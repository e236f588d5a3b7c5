// stop_strings on text that grows as generation would grow it: matches split over 2 and 3 pieces,
// overlapping partial matches ("aab" in "aaab"), multi-byte characters, the hold-back lengths the
// streamer relies on, the cut, and that an old match is never reported again.
#include <nexttok/stopping/stop_strings.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nexttok {
namespace {

// Feeds the pieces one by one (the text grows as the detokenizer appends); returns the index of the
// piece at which the criterion fired, or -1.
int fire_index(stop_strings& s, const std::vector<std::string>& pieces, std::string* text_out = nullptr) {
    std::string text;
    const std::vector<token_id> tokens{1};
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        text += pieces[i];
        if (s.check(generation_state{tokens, 0, text}) == finish_reason::stop_string) {
            if (text_out) *text_out = text;
            return static_cast<int>(i);
        }
    }
    if (text_out) *text_out = text;
    return -1;
}

TEST(stop_strings, found_when_split_over_two_and_three_pieces) {
    stop_strings two({"END"});
    std::string text;
    EXPECT_EQ(fire_index(two, {"The ", "E", "ND", " more"}, &text), 2);
    EXPECT_EQ(two.last_match()->begin, 4u);
    EXPECT_EQ(*two.text_cut(), 4u);  // the text is cut before "END"
    stop_strings three({"STOP"});
    EXPECT_EQ(fire_index(three, {"x", "S", "TO", "P"}), 3);
    EXPECT_EQ(three.last_match()->begin, 1u);
    stop_strings inside({"STOP"});
    EXPECT_EQ(fire_index(inside, {"ab", "cSTOPd"}), 1);
    EXPECT_EQ(*inside.text_cut(), 3u);
}

TEST(stop_strings, overlapping_partial_matches_are_found) {
    // "aab" in "aaab": the first "aa" is a false start; the match begins at offset 1.
    stop_strings s({"aab"});
    EXPECT_EQ(fire_index(s, {"a", "a", "a", "b"}), 3);
    EXPECT_EQ(s.last_match()->begin, 1u);
    EXPECT_EQ(s.last_match()->end, 4u);
    // "abac" in "ababac": "aba" looks like a start at 0, the match is at 2.
    stop_strings t({"abac"});
    EXPECT_EQ(t.hold_back("aba"), 3u);
    EXPECT_EQ(fire_index(t, {"aba", "bac"}), 1);
    EXPECT_EQ(t.last_match()->begin, 2u);
}

TEST(stop_strings, hold_back_is_the_longest_suffix_that_starts_a_stop_string) {
    stop_strings s({"aab", "</s>", "xyz"});
    EXPECT_EQ(s.hold_back(""), 0u);
    EXPECT_EQ(s.hold_back("b"), 0u);
    EXPECT_EQ(s.hold_back("a"), 1u);
    EXPECT_EQ(s.hold_back("aa"), 2u);
    EXPECT_EQ(s.hold_back("aaa"), 2u);  // "aaa" is no prefix; "aa" is
    EXPECT_EQ(s.hold_back("hello <"), 1u);
    EXPECT_EQ(s.hold_back("hello </"), 2u);
    EXPECT_EQ(s.hold_back("hello </s"), 3u);
    EXPECT_EQ(s.hold_back("xy"), 2u);
    EXPECT_EQ(s.hold_back("aab"), 0u);  // a whole match is check()'s business, not a prefix
}

TEST(stop_strings, multi_byte_characters_match_whole) {
    // The detokenizer appends whole characters only: "日本" arrives as "日" then "本".
    stop_strings s({"\xE6\x97\xA5\xE6\x9C\xAC"});
    EXPECT_EQ(fire_index(s, {"x", "\xE6\x97\xA5", "\xE6\x9C\xAC", "y"}), 2);
    EXPECT_EQ(*s.text_cut(), 1u);
    EXPECT_EQ(s.hold_back("x\xE6\x97\xA5"), 3u);  // the whole first character
}

TEST(stop_strings, earliest_match_wins_then_the_longer) {
    stop_strings s({"cd", "bcd", "b"});
    EXPECT_EQ(fire_index(s, {"a", "bcde"}), 1);
    EXPECT_EQ(s.last_match()->index, 1u);  // "bcd" and "b" start at 1: the longer wins
    EXPECT_EQ(s.last_match()->begin, 1u);
}

TEST(stop_strings, include_keeps_the_stop_string_in_the_cut) {
    stop_strings s({"END"}, /*include_stop_string=*/true);
    EXPECT_EQ(fire_index(s, {"xx", "EN", "Dyy"}), 2);
    EXPECT_EQ(*s.text_cut(), 5u);
}

TEST(stop_strings, old_matches_are_not_reported_again_and_reset_starts_over) {
    // Under all_of a match may not end generation; the next check must not report it again.
    stop_strings s({"ab", "xxxxx"});
    std::string text = "ab";
    const std::vector<token_id> tokens{1};
    EXPECT_EQ(s.check(generation_state{tokens, 0, text}), finish_reason::stop_string);
    text += "c";
    EXPECT_EQ(s.check(generation_state{tokens, 0, text}), finish_reason::none);
    EXPECT_FALSE(s.text_cut());
    text += "ab";
    EXPECT_EQ(s.check(generation_state{tokens, 0, text}), finish_reason::stop_string);
    EXPECT_EQ(s.last_match()->begin, 3u);
    // A new generation (shorter text) is scanned from its start.
    const std::string fresh = "ab";
    EXPECT_EQ(s.check(generation_state{tokens, 0, fresh}), finish_reason::stop_string);
    s.reset();
    EXPECT_FALSE(s.last_match());
    EXPECT_THROW(stop_strings({""}), invalid_argument_error);
    EXPECT_THROW(stop_strings({"\xA5\xE6"}), invalid_argument_error);  // not UTF-8: could only match mid-character
}

}  // namespace
}  // namespace nexttok
