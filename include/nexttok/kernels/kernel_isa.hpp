// Which instruction set the heavy kernels (matmul, matmul_group, causal_attention) run. A program
// compiled without -march flags still carries the AVX2 and AVX-512 kernels (GCC or Clang on x86-64:
// kernels/detail/passes.hpp) and runs the best the CPU has, chosen once, at the first call;
// NEXTTOK_ISA=avx512|avx2|portable in the environment asks for a lower set (a higher one than the
// CPU or the build has gives the highest there is, a lower one than the program's flags give runs
// those). The three sets add in the same order, so choosing between them changes no result, only
// the speed (tests/kernel_sets checks the logits of real files bitwise).
//
// The light kernels (norms, RoPE, single dot products: nexttok::dot, nexttok::rms_norm, ...) run
// the set the translation unit's flags give.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/detail/isa.hpp>

#include <atomic>
#include <vector>

namespace nexttok {

// The kernel sets, lowest first. avx512: AVX-512 F, BW, DQ, VL, VNNI, VBMI and GFNI (Ice Lake,
// Sapphire Rapids, Zen 4 and later), and AVX512_BF16 for bfloat16 weights where the CPU has it
// (Cooper Lake, Sapphire Rapids, Zen 4 and later: the same results); avx2: AVX2, FMA and F16C
// (Haswell, Zen and later).
enum class kernel_isa { portable = 0, avx2 = 1, avx512 = 2 };

inline const char* kernel_isa_name(kernel_isa isa) noexcept {
    switch (isa) {
        case kernel_isa::avx512:
            return "avx512";
        case kernel_isa::avx2:
            return "avx2";
        default:
            return "portable";
    }
}

namespace detail::isa {

// The lowest and highest set this program can run here: its flags' level up to the best one
// compiled that the CPU supports.
inline int lowest_level() noexcept { return base_level; }
inline int highest_level() noexcept {
    const int cpu = cpu_level();
    return cpu < top_level ? (cpu > base_level ? cpu : base_level) : top_level;
}

// NEXTTOK_ISA's level, or -1 when it is unset.
NEXTTOK_DECL int requested_level();

inline int clamp_level(int level) noexcept {
    const int high = highest_level();
    if (level > high) return high;
    return level < lowest_level() ? lowest_level() : level;
}

// The level in use: NEXTTOK_ISA's (clamped) or the highest, decided at the first call (which
// throws invalid_argument_error for an unknown NEXTTOK_ISA, and again at every later call).
NEXTTOK_DECL std::atomic<int>& level_in_use();

inline int active_level() { return level_in_use().load(std::memory_order_relaxed); }

}  // namespace detail::isa

// The kernel set matmul and attention run.
inline kernel_isa active_kernel_isa() { return static_cast<kernel_isa>(detail::isa::active_level()); }

// The kernel sets this program can run on this CPU, lowest first.
NEXTTOK_DECL std::vector<kernel_isa> available_kernel_isas();

// Makes matmul and attention run `isa` from now on (tests and benchmarks compare the sets). Not
// while another thread runs a forward step. Throws invalid_argument_error when `isa` is not among
// available_kernel_isas().
NEXTTOK_DECL void set_kernel_isa(kernel_isa isa);

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/kernels/impl/kernel_isa.ipp>
#endif
