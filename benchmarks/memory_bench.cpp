// Resident memory of generation from a mapped file (issue 5, acceptance 4): builds the 1.1B
// (TinyLlama) shape with random Q4_0 weights, writes it as GGUF with nexttok's writer, frees it,
// then loads the file (mapped, weights used in place), generates 256 tokens greedily and reports
// the peak resident set (VmHWM, reset after the file is written) against file size + KV cache.
// Usage: nexttok_memory_bench [path.gguf] [threads]; the file is written there and removed after.
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/decoder/decoder.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/random_model.hpp>

#include "support/model_gguf.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

// The peak resident set of this process in bytes, from /proc/self/status.
std::uint64_t peak_rss_bytes() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path path = argc > 1 ? argv[1] : "/tmp/nexttok-memory-bench-q4_0.gguf";
    const int n_threads = argc > 2 ? std::stoi(argv[2]) : 2;
    constexpr std::int64_t n_prompt = 1, n_new = 256;

    nexttok::model_config c;
    c.vocab_size = 32000;
    c.dim = 2048;
    c.n_layers = 22;
    c.n_heads = 32;
    c.n_kv_heads = 4;
    c.hidden_dim = 5632;
    c.max_seq_len = 2048;
    {
        const auto m = nexttok::make_random_model(c, 1234, nexttok::tensor_type::q4_0, false);
        nexttok::bench::write_model_gguf(*m, path);
    }                                               // the in-memory model is freed here
    std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current resident set
    const std::uint64_t rss_before = peak_rss_bytes();

    const auto m = nexttok::load_model(path);
    nexttok::decoder<float> dec(m, n_threads);
    nexttok::kv_cache<float> cache(m->config(), n_prompt + n_new);
    dec.reserve(1, n_prompt + n_new);
    std::vector<float> logits(static_cast<std::size_t>(m->config().vocab_size));
    nexttok::token_id token = 1;
    for (std::int64_t pos = 0; pos < n_prompt + n_new - 1; ++pos) {
        dec.forward(std::span<const nexttok::token_id>(&token, 1), pos, cache, logits);
        token = static_cast<nexttok::token_id>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    }
    const std::uint64_t peak = peak_rss_bytes();
    const std::uint64_t file = std::filesystem::file_size(path);
    const std::uint64_t kv = cache.bytes();
    std::filesystem::remove(path);
    const double ratio = static_cast<double>(peak) / static_cast<double>(file + kv);
    std::printf("q4_0 1.1B: file %.1f MB, KV cache (%lld positions, float) %.1f MB, resident before load %.1f MB\n",
                file / 1e6, static_cast<long long>(n_prompt + n_new), kv / 1e6, rss_before / 1e6);
    std::printf("peak RSS while generating %lld tokens: %.1f MB = %.3f x (file + KV cache): %s\n",
                static_cast<long long>(n_new), peak / 1e6, ratio, ratio < 1.15 ? "below +15%" : "ABOVE +15%");
    return ratio < 1.15 ? 0 : 1;
}
