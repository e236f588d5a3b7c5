// Reader of safetensors files: an 8-byte little-endian header length N, N bytes of JSON mapping
// each tensor name to {dtype, shape, data_offsets: [begin, end]} (offsets relative to the byte
// after the header), an optional "__metadata__" object of strings, then the data. The file is
// memory-mapped and owned here; tensor views point into the mapping (zero copy).
//
// The header is untrusted JSON of untrusted length: its length is checked against the file before
// it is parsed (by nlohmann::json, not by hand), and every tensor's dtype, shape and byte range
// are checked (sizes agree, inside the data, no overlap) before any view is made. Errors are
// format_error / unsupported_error naming the file, the offset and the tensor.
#pragma once

#include <nexttok/detail/config.hpp>
#include <nexttok/error.hpp>
#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nexttok {

class safetensors_file {
public:
    // Header lengths above this are refused before parsing (real headers are well under 10 MB).
    static constexpr std::uint64_t max_header_bytes = std::uint64_t{100} << 20;

    NEXTTOK_DECL explicit safetensors_file(const std::filesystem::path& path);

    safetensors_file(safetensors_file&&) noexcept = default;
    safetensors_file& operator=(safetensors_file&&) noexcept = default;

    std::string name() const { return file_.name(); }
    std::uint64_t data_offset() const noexcept { return data_offset_; }
    const std::vector<tensor_view>& tensors() const noexcept { return tensors_; }
    const std::map<std::string, std::string, std::less<>>& metadata() const noexcept { return metadata_; }

    NEXTTOK_DECL const tensor_view* find_tensor(std::string_view name) const;

private:
    // The tensor_type of a safetensors dtype, or nullopt for dtypes the decoder cannot use.
    NEXTTOK_DECL static std::optional<tensor_type> dtype(std::string_view d) noexcept;
    // The tensor_type that carries a dtype: the decoder computes with f32, f16 and bf16; any other
    // (an integer buffer some checkpoints hold, say) is an error only if a weight has it.
    NEXTTOK_DECL static tensor_type storage_type(std::string_view d, std::uint64_t elem) noexcept;
    NEXTTOK_DECL static std::uint64_t dtype_bytes(std::string_view d) noexcept;

    NEXTTOK_DECL void parse();
    NEXTTOK_DECL tensor_view read_tensor(const byte_reader& r, const std::string& key, const nlohmann::json& v,
                                         std::uint64_t data_size) const;
    NEXTTOK_DECL void check_overlaps() const;

    mapped_file file_;
    std::uint64_t data_offset_ = 0;
    std::vector<tensor_view> tensors_;
    std::map<std::string, std::size_t, std::less<>> index_;
    std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace nexttok

#if NEXTTOK_HEADER_ONLY
#include <nexttok/io/impl/safetensors.ipp>
#endif
