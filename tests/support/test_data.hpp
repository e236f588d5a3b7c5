// Locating the shared test data (../shared/data beside the project). Tests that need a file call
// NEXTTOK_REQUIRE_DATA(path), which skips the test with a clear message when the file is absent.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace nexttok::test {

inline std::filesystem::path data_dir() { return std::filesystem::path(NEXTTOK_TEST_DATA_DIR); }

inline std::filesystem::path data_path(const std::string& relative) { return data_dir() / relative; }

}  // namespace nexttok::test

#define NEXTTOK_REQUIRE_DATA(relative)                                                            \
    do {                                                                                          \
        if (!std::filesystem::exists(::nexttok::test::data_path(relative)))                       \
            GTEST_SKIP() << "shared test data not found: " << ::nexttok::test::data_path(relative) \
                         << " (expected ../shared/data beside the project)";                      \
    } while (0)
