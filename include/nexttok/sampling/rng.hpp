// The random number generator of the sampling module: xoshiro256** (Blackman & Vigna, "Scrambled
// linear pseudorandom number generators", 2018/2021), its four state words filled from the seed by
// splitmix64 as the authors recommend. Chosen because its output is defined bit for bit by the
// algorithm, unlike std::*_distribution whose results differ between standard libraries: the same
// seed gives the same tokens with libstdc++, libc++ and MSVC. Not cryptographic. 32 bytes of state,
// cheap to copy; one generator per sampler, not thread-safe.
#pragma once

#include <nexttok/detail/splitmix64.hpp>

#include <array>
#include <cstdint>

namespace nexttok {

namespace detail {

constexpr std::uint64_t rotl64(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

}  // namespace detail

class xoshiro256ss {
public:
    using result_type = std::uint64_t;  // also a UniformRandomBitGenerator

    explicit xoshiro256ss(std::uint64_t seed = 0) noexcept { this->seed(seed); }

    // A generator with the raw state given (for reference vectors). The all-zero state is a fixed
    // point that outputs zeros forever: avoid it (seed() never produces it).
    static xoshiro256ss from_state(const std::array<std::uint64_t, 4>& state) noexcept {
        xoshiro256ss g;
        g.s_ = state;
        return g;
    }

    // Restarts the stream: the four state words are four consecutive splitmix64 outputs from `seed`.
    void seed(std::uint64_t seed) noexcept {
        std::uint64_t sm = seed;
        for (auto& word : s_) word = detail::splitmix64_next(sm);
    }

    result_type next() noexcept {
        const std::uint64_t result = detail::rotl64(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = detail::rotl64(s_[3], 45);
        return result;
    }
    result_type operator()() noexcept { return next(); }
    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return ~result_type{0}; }

    // Uniform on [0, 1) with 24 bits of resolution (every value k / 2^24 equally likely): the top 24
    // bits of one output, scaled exactly (no rounding, never 1.0f).
    float uniform_float() noexcept { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

    const std::array<std::uint64_t, 4>& state() const noexcept { return s_; }
    friend bool operator==(const xoshiro256ss&, const xoshiro256ss&) = default;

private:
    std::array<std::uint64_t, 4> s_{};
};

}  // namespace nexttok
