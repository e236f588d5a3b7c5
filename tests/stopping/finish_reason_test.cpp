#include <nexttok/stopping/finish_reason.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace nexttok {
namespace {

TEST(stopping_finish_reason, to_string_names_every_reason) {
    EXPECT_EQ(to_string(finish_reason::none), "none");
    EXPECT_EQ(to_string(finish_reason::eos), "eos");
    EXPECT_EQ(to_string(finish_reason::max_new_tokens), "max_new_tokens");
    EXPECT_EQ(to_string(finish_reason::stop_token), "stop_token");
    EXPECT_EQ(to_string(finish_reason::stop_string), "stop_string");
    EXPECT_EQ(to_string(finish_reason::deadline), "deadline");
    EXPECT_EQ(to_string(finish_reason::cancelled), "cancelled");
    EXPECT_EQ(to_string(finish_reason::cache_full), "cache_full");
    EXPECT_EQ(to_string(finish_reason::callback), "callback");
    EXPECT_EQ(to_string(finish_reason::max_length), "max_length");
    EXPECT_EQ(to_string(finish_reason::predicate), "predicate");
    EXPECT_EQ(to_string(static_cast<finish_reason>(200)), "unknown");
    static_assert(to_string(finish_reason::eos) == "eos");
}

TEST(stopping_finish_reason, streams_its_name) {
    std::ostringstream os;
    os << finish_reason::stop_string;
    EXPECT_EQ(os.str(), "stop_string");
}

}  // namespace
}  // namespace nexttok
