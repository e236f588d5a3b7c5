// splitmix64 (Steele, Lea & Flood 2014; Vigna's reference splitmix64.c): a tiny generator whose
// output is defined bit for bit, used to seed the samplers' xoshiro256** and to fill random
// models. Internal.
#pragma once

#include <cstdint>

namespace nexttok::detail {

// Advances `state` and returns the next output. From state 0 the outputs are
// 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, ...
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

}  // namespace nexttok::detail
