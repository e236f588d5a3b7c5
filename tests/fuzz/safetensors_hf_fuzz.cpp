// A Hugging Face directory made from one input: bytes [0, 2) are the length n of config.json
// (little-endian, capped by what remains), [2, 2 + n) are config.json, the rest is
// model.safetensors. The safetensors header reader runs on its own first, then the directory
// loader on both files, then one decoder step when the model is small.
#include <nexttok/io/safetensors.hpp>
#include <nexttok/model/hf_loader.hpp>

#include "decoder_step.hpp"
#include "fuzz_support.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view in = nexttok::fuzz::as_chars(data, size);
    const std::size_t n_config = size >= 2 ? std::min<std::size_t>(data[0] | (std::size_t{data[1]} << 8), size - 2) : 0;
    const std::string_view rest = in.substr(std::min<std::size_t>(size, 2));
    static const std::filesystem::path dir = [] {
        std::filesystem::create_directories(nexttok::fuzz::scratch_dir() / "hf");
        return nexttok::fuzz::scratch_dir() / "hf";
    }();
    nexttok::fuzz::write_file("hf/config.json", rest.substr(0, n_config));
    const auto weights = nexttok::fuzz::write_file("hf/model.safetensors", rest.substr(n_config));
    try {
        const nexttok::safetensors_file st(weights);
        (void)st;
    } catch (const nexttok::error&) {
    }
    try {
        nexttok::fuzz::decoder_step(nexttok::load_hf_model(dir), size > 0 ? data[size - 1] : 0);
    } catch (const nexttok::error&) {
    }
    return 0;
}
