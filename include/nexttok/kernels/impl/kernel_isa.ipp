// The definitions of kernel_isa.hpp: reading NEXTTOK_ISA and choosing the kernel set in use.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/kernels/kernel_isa.hpp>

#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

namespace detail::isa {

NEXTTOK_DECL int requested_level() {
    const char* value = std::getenv("NEXTTOK_ISA");
    if (value == nullptr || *value == '\0') return -1;
    const std::string_view v(value);
    if (v == "avx512") return 2;
    if (v == "avx2") return 1;
    if (v == "portable") return 0;
    throw invalid_argument_error("NEXTTOK_ISA: '" + std::string(v) + "' is not one of avx512, avx2, portable");
}

NEXTTOK_DECL std::atomic<int>& level_in_use() {
    static std::atomic<int> level{[] {
        const int requested = requested_level();
        return requested < 0 ? highest_level() : clamp_level(requested);
    }()};
    return level;
}

}  // namespace detail::isa

NEXTTOK_DECL std::vector<kernel_isa> available_kernel_isas() {
    std::vector<kernel_isa> sets;
    for (int l = detail::isa::lowest_level(); l <= detail::isa::highest_level(); ++l)
        sets.push_back(static_cast<kernel_isa>(l));
    return sets;
}

NEXTTOK_DECL void set_kernel_isa(kernel_isa isa) {
    const int level = static_cast<int>(isa);
    if (level < detail::isa::lowest_level() || level > detail::isa::highest_level())
        throw invalid_argument_error(std::string("set_kernel_isa: this program cannot run the ") +
                                     kernel_isa_name(isa) + " kernels on this CPU (it can run " +
                                     kernel_isa_name(static_cast<kernel_isa>(detail::isa::lowest_level())) + " up to " +
                                     kernel_isa_name(static_cast<kernel_isa>(detail::isa::highest_level())) + ")");
    detail::isa::level_in_use().store(level, std::memory_order_relaxed);
}

}  // namespace nexttok
