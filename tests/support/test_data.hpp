// Locating the shared test data (../shared/data beside the project). Tests that need a file call
// NEXTTOK_REQUIRE_DATA(path), which skips the test with a clear message when the file is absent, or
// fails it when the environment variable CI is set (CI always has the data: a skip would hide a
// broken path).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace nexttok::test {

// CI is set (to anything but "" or "false"): missing data fails the tests that need it.
inline bool data_is_required() {
    const char* ci = std::getenv("CI");
    return ci != nullptr && std::string_view(ci) != "" && std::string_view(ci) != "false";
}

inline std::filesystem::path data_dir() { return std::filesystem::path(NEXTTOK_TEST_DATA_DIR); }

inline std::filesystem::path data_path(const std::string& relative) { return data_dir() / relative; }

}  // namespace nexttok::test

#define NEXTTOK_REQUIRE_DATA(relative)                                                                           \
    do {                                                                                                         \
        if (!std::filesystem::exists(::nexttok::test::data_path(relative))) {                                    \
            if (::nexttok::test::data_is_required())                                                             \
                FAIL() << "shared test data not found: " << ::nexttok::test::data_path(relative)                 \
                       << " (CI is set: the oracle tests must run; expected ../shared/data beside the project)"; \
            GTEST_SKIP() << "shared test data not found: " << ::nexttok::test::data_path(relative)               \
                         << " (expected ../shared/data beside the project)";                                     \
        }                                                                                                        \
    } while (0)
