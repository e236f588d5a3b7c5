// A llama2.c checkpoint (28-byte header, then the weights): the loader must accept it or throw a
// nexttok::error, and a model it accepts must survive one decoder step.
#include <nexttok/model/llama2c_loader.hpp>

#include "decoder_step.hpp"
#include "fuzz_support.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = nexttok::fuzz::write_file("model.bin", nexttok::fuzz::as_chars(data, size));
    try {
        nexttok::fuzz::decoder_step(nexttok::load_llama2c_model(path), size > 0 ? data[size - 1] : 0);
    } catch (const nexttok::error&) {
    }
    return 0;
}
