// The inner loops of roofline.hpp's limits, by the kernel set named NEXTTOK_KERNEL_PASS (included
// once per set through nexttok/detail/each_isa.hpp, as the kernels are): a program that dispatches
// measures the machine with the set its kernels run, not with its own flags.
// No include guard: roofline.hpp includes this file once per set.

namespace nexttok::bench::NEXTTOK_KERNEL_PASS {

// The sum of p[begin, end) by four chains of vectors (a streaming read).
inline float sum_floats(const float* p, std::size_t begin, std::size_t end) noexcept {
    namespace s = ::nexttok::NEXTTOK_KERNEL_PASS::kernel_detail::simd;
    s::vec a0 = s::zero(), a1 = s::zero(), a2 = s::zero(), a3 = s::zero();
    for (std::size_t i = begin; i + 4 * s::width <= end; i += 4 * s::width) {
        a0 = s::add(a0, s::load(p + i));
        a1 = s::add(a1, s::load(p + i + s::width));
        a2 = s::add(a2, s::load(p + i + 2 * s::width));
        a3 = s::add(a3, s::load(p + i + 3 * s::width));
    }
    return s::reduce(s::add(s::add(a0, a1), s::add(a2, a3)));
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
