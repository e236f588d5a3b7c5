// The kernel sets one program carries (kernels/kernel_isa.hpp), run one after the other on real
// model files: this program is built without -march flags, as a user's program would be, so it
// holds the portable kernels of its flags and, with GCC or Clang on x86-64, the AVX2 and AVX-512 sets. On
// every set the CPU runs, the logits meet llama.cpp's within data/README.md's tolerance (the oracle
// of tests/model/reference_logits_test.cpp), and every set gives bitwise the logits of the portable
// set (the kernels add in one order, which the portable code computes lane by lane as AVX2 does in
// registers, and the AVX-512 kernels in wider steps): the same tokens on every CPU.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/kernels/buffers.hpp>
#include <nexttok/kernels/kernel_isa.hpp>
#include <nexttok/model/load_model.hpp>

#include <file_patch.hpp>
#include <reference_logits.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nexttok {
namespace {

// Restores the set in use at the end of a test.
struct kernel_isa_guard {
    kernel_isa saved = active_kernel_isa();
    ~kernel_isa_guard() { set_kernel_isa(saved); }
};

TEST(kernel_sets, a_plain_build_carries_every_set_the_cpu_runs) {
    const std::vector<kernel_isa> sets = available_kernel_isas();
    ASSERT_FALSE(sets.empty());
    EXPECT_EQ(sets.front(), kernel_isa::portable);  // this program's flags
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    if (avx2) {
        ASSERT_GE(sets.size(), 2u);
        EXPECT_EQ(sets[1], kernel_isa::avx2);
    }
    // Without NEXTTOK_ISA the best set runs.
    if (std::getenv("NEXTTOK_ISA") == nullptr) {
        EXPECT_EQ(active_kernel_isa(), sets.back());
    }
#endif
}

TEST(kernel_sets, set_kernel_isa_refuses_a_set_this_program_cannot_run) {
    kernel_isa_guard guard;
    const std::vector<kernel_isa> sets = available_kernel_isas();
    for (kernel_isa s : sets) {
        set_kernel_isa(s);
        EXPECT_EQ(active_kernel_isa(), s);
    }
    if (sets.back() != kernel_isa::avx512) {
        try {
            set_kernel_isa(kernel_isa::avx512);
            FAIL() << "set_kernel_isa(avx512) accepted on a CPU or build without it";
        } catch (const invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find("avx512"), std::string::npos) << e.what();
        }
    }
}

TEST(kernel_sets, an_unknown_nexttok_isa_is_an_error_that_names_the_variable) {
    const char* saved = std::getenv("NEXTTOK_ISA");
    const std::string restore = saved ? saved : "";
    ::setenv("NEXTTOK_ISA", "avx9", 1);
    try {
        detail::isa::requested_level();
        ADD_FAILURE() << "NEXTTOK_ISA=avx9 accepted";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("NEXTTOK_ISA: 'avx9'"), std::string::npos) << e.what();
    }
    ::setenv("NEXTTOK_ISA", "avx2", 1);
    EXPECT_EQ(detail::isa::requested_level(), 1);
    ::setenv("NEXTTOK_ISA", "portable", 1);
    EXPECT_EQ(detail::isa::requested_level(), 0);
    if (saved)
        ::setenv("NEXTTOK_ISA", restore.c_str(), 1);
    else
        ::unsetenv("NEXTTOK_ISA");
}

struct model_case {
    const char* name;  // models/random/<name>.gguf, reference/<name>.logits.txt
    double max_relative_rms;
};

void PrintTo(const model_case& c, std::ostream* os) { *os << c.name; }

std::string case_name(const ::testing::TestParamInfo<model_case>& info) {
    std::string name = info.param.name;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

// The logits of the prompt (one prefill, every position), then of 4 decode steps and of a 3-token
// chunk, with a float cache and a q8_0 cache: everything matmul and attention compute.
template <class Cache>
std::vector<float> logits_of(const std::shared_ptr<const model>& m, const std::vector<token_id>& prompt) {
    const std::int64_t V = m->config().vocab_size;
    decoder<float> dec(m);
    Cache cache(m->config(), static_cast<std::int64_t>(prompt.size()) + 16);
    std::vector<float> all(prompt.size() * static_cast<std::size_t>(V)), step(static_cast<std::size_t>(V));
    dec.forward(prompt, 0, cache, all, logits_for::all);
    auto pos = static_cast<std::int64_t>(prompt.size());
    for (int i = 0; i < 4; ++i) {
        const token_id next = static_cast<token_id>((7 * i + 3) % V);
        dec.forward(std::span<const token_id>(&next, 1), pos++, cache, step);
        all.insert(all.end(), step.begin(), step.end());
    }
    const std::vector<token_id> chunk{1, 2, 3};
    std::vector<float> chunk_logits(chunk.size() * static_cast<std::size_t>(V));
    dec.forward(chunk, pos, cache, chunk_logits, logits_for::all);
    all.insert(all.end(), chunk_logits.begin(), chunk_logits.end());
    return all;
}

class kernel_sets_model_test : public ::testing::TestWithParam<model_case> {};

TEST_P(kernel_sets_model_test, every_set_meets_the_reference_and_all_sets_agree_bitwise) {
    const model_case& mc = GetParam();
    const std::string file = std::string("models/random/") + mc.name + ".gguf";
    NEXTTOK_REQUIRE_DATA(file);
    const auto ref =
        test::read_reference_logits(test::data_path(std::string("reference/") + mc.name + ".logits.txt").string());
    auto m = load_model(test::data_path(file));
    const std::int64_t V = m->config().vocab_size;
    kernel_isa_guard guard;
    std::vector<float> first, first_q8;  // of the first set, the portable one
    for (kernel_isa s : available_kernel_isas()) {
        set_kernel_isa(s);
        const std::vector<float> logits = logits_of<kv_cache<float>>(m, ref.prompt);
        const std::vector<float> logits_q8 = logits_of<q8_0_kv_cache<float>>(m, ref.prompt);
        // The prompt's logits against llama.cpp's.
        std::vector<float> expected,
            ours(logits.begin(), logits.begin() + static_cast<std::ptrdiff_t>(ref.prompt.size()) * V);
        for (const auto& row : ref.logits) expected.insert(expected.end(), row.begin(), row.end());
        EXPECT_LT(test::relative_rms_error(ours, expected), mc.max_relative_rms) << kernel_isa_name(s);
        if (first.empty()) {
            first = logits;
            first_q8 = logits_q8;
            continue;
        }
        ASSERT_EQ(logits.size(), first.size());
        std::size_t differ = 0, differ_q8 = 0;
        for (std::size_t i = 0; i < first.size(); ++i) differ += std::memcmp(&logits[i], &first[i], sizeof(float)) != 0;
        for (std::size_t i = 0; i < first_q8.size(); ++i)
            differ_q8 += std::memcmp(&logits_q8[i], &first_q8[i], sizeof(float)) != 0;
        EXPECT_EQ(differ, 0u) << kernel_isa_name(s) << " against the portable set, float cache";
        EXPECT_EQ(differ_q8, 0u) << kernel_isa_name(s) << " against the portable set, q8_0 cache";
    }
}

// bfloat16 weights (kernels/dot.hpp, bf16_block_range: vdpbf16ps in the AVX-512 set where the CPU
// has AVX512_BF16, decided at run time in this program, two fused multiply-adds elsewhere):
// tiny-f32.gguf with every matrix rounded to bfloat16 (the norms stay float). Every set gives the
// same logits, bitwise, and they stay near llama.cpp's logits of the float file: rounding the
// weights and the activations to 8 significant bits each (2^-9 relative) moves them by 5.4e-3
// relative RMS here (seen on every set); the bound is about three times that.
TEST(kernel_sets, bf16_weights_agree_bitwise_in_every_set) {
    NEXTTOK_REQUIRE_DATA("models/random/tiny-f32.gguf");
    const auto ref = test::read_reference_logits(test::data_path("reference/tiny-f32.logits.txt").string());
    test::temp_dir dir;
    const auto path = dir.path() / "tiny-bf16.gguf";
    {
        gguf_file g(test::data_path("models/random/tiny-f32.gguf"));
        gguf_writer w;
        for (const auto& [key, value] : g.metadata()) w.add_value(key, value);
        std::vector<std::vector<std::uint16_t>> words;
        for (const tensor_view& t : g.tensors()) {
            if (t.type != tensor_type::f32 || t.n_dims != 2) {
                w.add_tensor(t);
                continue;
            }
            std::vector<std::uint16_t>& v = words.emplace_back(t.n_elements());
            for (std::uint64_t i = 0; i < t.n_elements(); ++i) {
                float f;
                std::memcpy(&f, t.data + 4 * i, 4);
                v[i] = round_to_bf16(f).bits;
            }
            w.add_tensor(t.name, tensor_type::bf16, {t.ne[0], t.ne[1]}, std::as_bytes(std::span(v)));
        }
        w.write(path);
    }
    auto m = load_model(path);
    const std::int64_t V = m->config().vocab_size;
    kernel_isa_guard guard;
    std::vector<float> first;
    for (kernel_isa s : available_kernel_isas()) {
        set_kernel_isa(s);
        const std::vector<float> logits = logits_of<kv_cache<float>>(m, ref.prompt);
        std::vector<float> expected,
            ours(logits.begin(), logits.begin() + static_cast<std::ptrdiff_t>(ref.prompt.size()) * V);
        for (const auto& row : ref.logits) expected.insert(expected.end(), row.begin(), row.end());
        const double err = test::relative_rms_error(ours, expected);
        RecordProperty(std::string("relative_rms_") + kernel_isa_name(s), std::to_string(err));
        EXPECT_LT(err, 1.5e-2) << kernel_isa_name(s);
        if (first.empty()) {
            first = logits;
            continue;
        }
        ASSERT_EQ(logits.size(), first.size());
        std::size_t differ = 0;
        for (std::size_t i = 0; i < first.size(); ++i) differ += std::memcmp(&logits[i], &first[i], sizeof(float)) != 0;
        EXPECT_EQ(differ, 0u) << kernel_isa_name(s) << " against the portable set"
                              << (s == kernel_isa::avx512 && detail::isa::cpu_has_avx512bf16() ? " (vdpbf16ps)" : "");
    }
}

// Tolerances from data/README.md; one file per family of kernels (float, half, q8_0, q4_0, the
// k-quants, the 32-element legacy types, the low-bit 256-element types).
INSTANTIATE_TEST_SUITE_P(files, kernel_sets_model_test,
                         ::testing::Values(model_case{"tiny-f32", 1e-4}, model_case{"tiny-f16", 1e-3},
                                           model_case{"tiny-q8_0", 3e-2}, model_case{"tiny-q4_0", 3e-2},
                                           model_case{"small-q4_k_m", 3e-2}, model_case{"small-q6_k", 3e-2},
                                           model_case{"mixed-dim384-q4_1", 3e-2}, model_case{"mixed-dim384-q5_1", 3e-2},
                                           model_case{"mixed-dim384-iq4_nl", 3e-2},
                                           model_case{"mixed-dim384-q2_k", 3e-2},
                                           model_case{"mixed-dim384-iq4_xs", 3e-2}),
                         case_name);

}  // namespace
}  // namespace nexttok
