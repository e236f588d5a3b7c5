// The UTF-8 scanner against the Unicode standard: the well-formed byte sequences of table 3-7 and the
// U+FFFD substitution of maximal subparts (section 3.9, table 3-8).
#include <nexttok/detail/utf8.hpp>

#include <gtest/gtest.h>

#include <string>

namespace nexttok::detail {
namespace {

TEST(utf8, accepts_the_boundaries_of_each_well_formed_range) {
    for (const char* s : {"\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
                          "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"}) {
        const std::string str(s);
        const utf8_scan c = scan_utf8(str);
        EXPECT_EQ(c.status, utf8_status::valid) << str;
        EXPECT_EQ(c.length, str.size()) << str;
    }
    EXPECT_EQ(scan_utf8(std::string(1, '\0')).status, utf8_status::valid);
}

TEST(utf8, rejects_overlongs_surrogates_and_values_above_the_last_code_point) {
    // {bytes, length of the maximal subpart}
    const std::pair<const char*, std::size_t> cases[] = {
        {"\x80", 1},              // stray continuation
        {"\xC0\x80", 1},          // overlong NUL
        {"\xC1\xBF", 1},          // overlong
        {"\xE0\x80\x80", 1},      // overlong 3-byte
        {"\xED\xA0\x80", 1},      // surrogate U+D800
        {"\xF0\x80\x80\x80", 1},  // overlong 4-byte
        {"\xF4\x90\x80\x80", 1},  // U+110000
        {"\xF5\x80\x80\x80", 1},  // lead byte beyond F4
        {"\xFF", 1},
        {"\xE2\x82"
         "a",
         2},  // truncated by an ASCII byte: both bytes are one subpart
        {"\xF0\x9F\xA6"
         "a",
         3},
    };
    for (const auto& [bytes, subpart] : cases) {
        const utf8_scan c = scan_utf8(bytes);
        EXPECT_EQ(c.status, utf8_status::invalid) << testing::PrintToString(std::string(bytes));
        EXPECT_EQ(c.length, subpart) << testing::PrintToString(std::string(bytes));
    }
}

TEST(utf8, reports_a_prefix_cut_by_the_end_as_incomplete) {
    for (const char* s : {"\xC3", "\xE2", "\xE2\x82", "\xF0", "\xF0\x9F", "\xF0\x9F\xA6"}) {
        const utf8_scan c = scan_utf8(s);
        EXPECT_EQ(c.status, utf8_status::incomplete) << testing::PrintToString(std::string(s));
        EXPECT_EQ(c.length, std::string(s).size());
    }
    // E0 80 cannot be completed (overlong), so it is not "incomplete".
    EXPECT_EQ(scan_utf8("\xE0\x80").status, utf8_status::invalid);
}

// The example of the Unicode standard, section 3.9 (table 3-8): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64
// becomes a FFFD FFFD FFFD b FFFD c FFFD FFFD d.
TEST(utf8, replaces_each_maximal_subpart_as_the_standard_shows) {
    const std::string input = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
    const std::string r = "\xEF\xBF\xBD";
    std::string out;
    EXPECT_EQ(append_sanitized_utf8(input, out, false), 0u);
    EXPECT_EQ(out, "a" + r + r + r + "b" + r + "c" + r + r + "d");
    EXPECT_FALSE(is_valid_utf8(input));
    EXPECT_TRUE(is_valid_utf8(out));
}

TEST(utf8, keeps_an_incomplete_tail_only_when_asked) {
    std::string out;
    EXPECT_EQ(append_sanitized_utf8("ab\xE6\x97", out, true), 2u);
    EXPECT_EQ(out, "ab");
    out.clear();
    EXPECT_EQ(append_sanitized_utf8("ab\xE6\x97", out, false), 0u);
    EXPECT_EQ(out, "ab\xEF\xBF\xBD");
}

}  // namespace
}  // namespace nexttok::detail
