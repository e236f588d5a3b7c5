// The definitions of hf_loader.hpp: config.json, the safetensors shards, and the weights through
// the architecture's Hugging Face names.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/json_file.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/safetensors.hpp>
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/detail/hf_config.hpp>
#include <nexttok/model/detail/weight_checks.hpp>
#include <nexttok/model/detail/weight_table.hpp>
#include <nexttok/model/hf_loader.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/tensor_check.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace nexttok {

namespace detail {

// The safetensors files of a directory: model.safetensors, or every shard of the index.
NEXTTOK_DECL std::vector<safetensors_file> open_shards(const std::filesystem::path& dir) {
    std::vector<safetensors_file> shards;
    if (std::filesystem::exists(dir / "model.safetensors")) {
        shards.emplace_back(dir / "model.safetensors");
        return shards;
    }
    const auto index_path = dir / "model.safetensors.index.json";
    if (!std::filesystem::exists(index_path))
        throw io_error(dir.string() + ": neither model.safetensors nor model.safetensors.index.json is there");
    const nlohmann::json index = read_json_object(index_path);
    const std::string name = index_path.filename().string();
    if (!index.contains("weight_map") || !index["weight_map"].is_object())
        throw format_error(name + ": key 'weight_map': expected an object mapping tensor names to files");
    std::set<std::string> files;
    for (const auto& [tensor, file] : index["weight_map"].items()) {
        if (!file.is_string())
            throw format_error(name + ": weight_map['" + quote_text(tensor) + "']: expected a file name");
        const std::string f = file.get<std::string>();
        if (f.find('/') != std::string::npos || f.find("..") != std::string::npos)
            throw format_error(name + ": weight_map['" + quote_text(tensor) + "'] = '" + quote_text(f) +
                               "': expected a file name inside the directory");
        files.insert(f);
    }
    for (const std::string& f : files) shards.emplace_back(dir / f);
    return shards;
}

// A (rows, cols) copy of a (cols, rows)-stored matrix, elements of `elem` bytes, into `out`.
NEXTTOK_DECL void transpose_into(const tensor_view& t, std::size_t elem, std::byte* out) {
    const std::uint64_t in_rows = t.ne[1], in_cols = t.ne[0];
    for (std::uint64_t r = 0; r < in_rows; ++r)
        for (std::uint64_t c = 0; c < in_cols; ++c)
            std::memcpy(out + (c * in_rows + r) * elem, t.data + (r * in_cols + c) * elem, elem);
}

// The tensors of a directory's shards as load_weight_table reads them: the architecture's Hugging
// Face names, under its prefixes ("model." ...), checked against the shape the model config
// implies, with GPT-2's Conv1D weights transposed into buffers that `files` owns.
class hf_tensors {
public:
    hf_tensors(const hf_config_keys& keys, model::hf_files& files) : keys_(keys), files_(files) {
        for (const safetensors_file& s : files.shards)
            for (const tensor_view& t : s.tensors()) {
                by_name_[t.name] = &t;
                shard_of_[t.name] = s.name();
            }
    }

    std::string name(const tensor_entry& e, std::int64_t layer) const {
        if (e.hf.empty()) return {};
        return layer < 0 ? std::string(e.hf)
                         : std::string(keys_.layer_prefix) + std::to_string(layer) + "." + std::string(e.hf);
    }
    bool has(const std::string& name) const { return find(name) != nullptr; }
    // `name` of (rows, cols) (rows 0: a vector of cols), transposed if the entry is stored as
    // Conv1D; format_error when it is missing or misshapen.
    tensor_view load(const std::string& name, const tensor_entry& e, std::int64_t rows, std::int64_t cols) {
        const tensor_view* t = find(name);
        if (t == nullptr)
            throw format_error(files_.dir.filename().string() + ": tensor '" + std::string(keys_.prefix) + name +
                               "' is missing");
        if (!e.hf_conv1d || rows == 0) {
            check_weight(shard_of_.at(t->name), *t, rows, cols);
            return *t;
        }
        check_weight(shard_of_.at(t->name), *t, cols, rows);  // stored (in, out)
        return transposed(*t);
    }
    // lm_head.weight, which sits outside the prefixes, or null; checked as (vocab_size, dim).
    const tensor_view* lm_head(const model_config& c) const {
        const auto head = by_name_.find("lm_head.weight");
        if (head == by_name_.end()) return nullptr;
        check_weight(shard_of_.at(head->first), *head->second, c.vocab_size, c.dim);
        return head->second;
    }

private:
    // The tensor `name` under the first prefix that has it, or null.
    const tensor_view* find(const std::string& name) const {
        if (auto it = by_name_.find(std::string(keys_.prefix) + name); it != by_name_.end()) return it->second;
        if (auto it = by_name_.find(name); keys_.unprefixed_too && it != by_name_.end()) return it->second;
        return nullptr;
    }
    tensor_view transposed(const tensor_view& stored) {
        const std::size_t elem = stored.n_bytes / stored.n_elements();
        model::memory_buffer& buf =
            files_.converted.emplace_back(model::memory_buffer::allocate(stored.n_bytes, stored.name));
        transpose_into(stored, elem, buf.bytes.get());
        tensor_view t = stored;
        t.ne = {stored.ne[1], stored.ne[0], 1, 1};
        t.data = buf.bytes.get();
        return t;
    }

    const hf_config_keys& keys_;
    model::hf_files& files_;
    std::map<std::string, const tensor_view*, std::less<>> by_name_;
    std::map<std::string, std::string, std::less<>> shard_of_;
};

}  // namespace detail

NEXTTOK_DECL std::shared_ptr<const model> load_hf_model(const std::filesystem::path& directory,
                                                        const load_options& options) {
    const std::filesystem::path dir = std::filesystem::path(directory).lexically_normal().parent_path() /
                                      std::filesystem::path(directory).lexically_normal().filename();
    const detail::hf_model_config hc = detail::read_hf_config(dir);
    const model_config& c = hc.config;
    model::hf_files files;
    files.dir = dir.filename().empty() ? dir.parent_path() : dir;
    files.shards = detail::open_shards(dir);
    detail::hf_tensors t(hc.architecture.hf, files);
    model_weights w;
    detail::load_weight_table(hc.architecture, c, t, w);
    model_config final_config = c;
    const tensor_view* head = c.tied_output ? nullptr : t.lm_head(c);  // outside the prefixes
    final_config.tied_output = head == nullptr;
    w.output = final_config.tied_output ? w.token_embd : *head;
    check_weights(dir.filename().string(), w, options);
    return std::make_shared<const model>(final_config, std::move(w), model::source(std::move(files)),
                                         options.repack_weights);
}

}  // namespace nexttok
