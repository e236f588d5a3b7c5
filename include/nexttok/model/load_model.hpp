// Opens a model and picks the loader: a directory is a Hugging Face model (config.json +
// safetensors); a file is GGUF (magic "GGUF") or else a llama2.c checkpoint (read as its 28-byte
// header, which the loader validates).
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/model/gguf_loader.hpp>
#include <nexttok/model/hf_loader.hpp>
#include <nexttok/model/llama2c_loader.hpp>
#include <nexttok/model/load_options.hpp>

#include <filesystem>
#include <memory>

namespace nexttok {

// Whether the file starts with the GGUF magic; io_error naming it when it cannot be opened.
NEXTTOK_DECL bool is_gguf_file(const std::filesystem::path& path);

// options: what the loader checks (load_options.hpp; by default the weights of models up to 2 GiB
// are scanned for NaN and inf).
NEXTTOK_DECL std::shared_ptr<const model> load_model(const std::filesystem::path& path,
                                                     const load_options& options = {});

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/model/impl/load_model.ipp>
#endif
