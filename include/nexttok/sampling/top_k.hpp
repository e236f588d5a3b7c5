// Top-k filtering (Fan, Lewis & Dauphin 2018, "Hierarchical Neural Story Generation"): keep the k
// candidates with the highest logits.
//
// Reproduces llama.cpp's top-k sampler (llama_sampler_top_k_impl):
//   - k <= 0: no-op (the set is left as it is, unsorted if it was).
//   - k >= size(): nothing removed, but the set is sorted, as llama.cpp's partial sort of all of it.
//   - otherwise the k first candidates of the sorted order are kept, sorted.
// Ties at the cut (the engines disagree): llama.cpp keeps exactly k and leaves the choice among ties to
// std::partial_sort (unspecified); Hugging Face's TopKLogitsWarper keeps every token whose logit equals
// the k-th (more than k). We keep exactly k, as llama.cpp, with the order defined: logit descending,
// then lower token id first (see candidates.hpp), so among candidates tied with the k-th logit the
// lowest ids are kept (tested in top_k_test.cpp). Cost O(n + k log k).
#pragma once

#include <nexttok/sampling/candidates.hpp>

#include <cstddef>
#include <cstdint>

namespace nexttok {

class top_k {
public:
    explicit top_k(std::int32_t k) noexcept : k_(k) {}

    void apply(candidates& c) const {
        if (k_ <= 0 || c.empty()) return;
        c.keep_top(static_cast<std::size_t>(k_));
    }

    std::int32_t k() const noexcept { return k_; }

private:
    std::int32_t k_;
};

}  // namespace nexttok
