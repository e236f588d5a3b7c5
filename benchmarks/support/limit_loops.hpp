// The inner loops of roofline.hpp's limits, by the kernel set named NEXTTOK_KERNEL_PASS (included
// once per set through nexttok/detail/each_isa.hpp, as the kernels are): a program that dispatches
// measures the machine with the set its kernels run, not with its own flags.
// No include guard: roofline.hpp includes this file once per set.

namespace nexttok::bench::NEXTTOK_KERNEL_PASS {

// The sum of p[begin, end), read as the decode tiles read weight rows: two rows of pass_row floats
// at a time, a vector of each in turn. (One stream read less than the kernels did: Intel Xeon,
// 1 GiB, 1 thread 16.1-16.6 GB/s against 17.1-17.7 this way, 2 threads 31-32.8 against 33.8-35.0;
// 2-row f16 decode had read at 1.04-1.08 of the one-stream pass. Two vectors of a row in turn: 16.7.)
inline constexpr std::size_t pass_row = 2816;  // 11 KiB, a multiple of every set's width
inline float sum_floats(const float* p, std::size_t begin, std::size_t end) noexcept {
    namespace s = ::nexttok::NEXTTOK_KERNEL_PASS::kernel_detail::simd;
    s::vec a0 = s::zero(), a1 = s::zero();
    std::size_t i = begin;
    for (; i + 2 * pass_row <= end; i += 2 * pass_row) {
        const float* r0 = p + i;
        const float* r1 = r0 + pass_row;
        for (std::size_t j = 0; j < pass_row; j += s::width) {
            a0 = s::add(a0, s::load(r0 + j));
            a1 = s::add(a1, s::load(r1 + j));
        }
    }
    for (; i + s::width <= end; i += s::width) a0 = s::add(a0, s::load(p + i));
    return s::reduce(s::add(a0, a1));
}

inline constexpr int fma_chains = 12;  // enough independent FMAs to cover latency x throughput

// `iterations` rounds of fma_chains independent vector FMAs; *flops receives their float
// operations (an FMA counts 2).
inline float fma_rounds(std::int64_t iterations, double* flops) noexcept {
    namespace s = ::nexttok::NEXTTOK_KERNEL_PASS::kernel_detail::simd;
    float a_lanes[s::width], b_lanes[s::width];
    for (int i = 0; i < s::width; ++i) a_lanes[i] = 0.999f, b_lanes[i] = 1e-3f;
    const s::vec a = s::load(a_lanes), b = s::load(b_lanes);
    s::vec acc[fma_chains];
    // Unrolled by pragma so that -O2 (a program built without flags) keeps acc in registers too;
    // each chain starts from its own value, so that the compiler cannot merge them into one.
    NEXTTOK_UNROLL for (int c = 0; c < fma_chains; ++c) acc[c] = s::set1(static_cast<float>(c));
    for (std::int64_t i = 0; i < iterations; ++i) {
        NEXTTOK_UNROLL for (int c = 0; c < fma_chains; ++c) acc[c] = s::fmadd(acc[c], a, b);
    }
    s::vec sum = acc[0];
    NEXTTOK_UNROLL for (int c = 1; c < fma_chains; ++c) sum = s::add(sum, acc[c]);
    *flops = 2.0 * fma_chains * s::width * static_cast<double>(iterations);
    return s::reduce(sum);
}

}  // namespace nexttok::bench::NEXTTOK_KERNEL_PASS
