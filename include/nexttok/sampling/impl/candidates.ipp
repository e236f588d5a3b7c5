// The definitions of candidates.hpp: loading, softmax and the sorts.
#pragma once

#include <nexttok/sampling/candidates.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>

namespace nexttok {

NEXTTOK_DECL void candidates::assign(std::span<const float> vocab_logits) {
    const std::size_t n = vocab_logits.size();
    assert(n <= std::size_t{std::numeric_limits<std::uint32_t>::max()});
    assert(std::none_of(vocab_logits.begin(), vocab_logits.end(), [](float x) { return std::isnan(x); }));
    reserve_(n);
    ids.resize(n);
    std::iota(ids.begin(), ids.end(), token_id{0});
    logits.assign(vocab_logits.begin(), vocab_logits.end());
    probs.resize(n);
    sorted = false;
    probs_valid = false;
}

NEXTTOK_DECL void candidates::softmax() {
    if (empty()) return;
    const float max_l = max_logit();
    float sum = 0.0f;
    for (std::size_t i = 0; i < size(); ++i) {
        const float p = std::exp(logits[i] - max_l);
        probs[i] = p;
        sum += p;
    }
    for (float& p : probs) p /= sum;
    probs_valid = true;
}

NEXTTOK_DECL void candidates::sort() {
    if (sorted) return;
    fill_order_();
    std::sort(order_.begin(), order_.end(), rank_order_{this});
    gather_(size());
    sorted = true;
}

NEXTTOK_DECL void candidates::sort_prefix(std::size_t n) {
    if (sorted) return;
    if (n + 1 >= size()) {
        sort();
        return;
    }
    if (n == 0) return;
    select_top_(n);
    // The remainder: every position that ranks after the last selected one, in original order.
    const std::uint32_t last = order_[n - 1];
    std::size_t out = n;
    for (std::uint32_t pos = 0; pos < size(); ++pos)
        if (ranks_before_(last, pos)) order_[out++] = pos;
    assert(out == size());
    gather_(size());
}

NEXTTOK_DECL void candidates::keep_top(std::size_t k) {
    if (k >= size()) {
        sort();
        return;
    }
    if (sorted) {
        truncate(k);
        return;
    }
    if (k > 0) select_top_(k);
    gather_(k);
    sorted = true;
    probs_valid = false;
}

NEXTTOK_DECL void candidates::reserve_(std::size_t n) {
    ids.reserve(n);
    logits.reserve(n);
    probs.reserve(n);
    order_.reserve(n);
    ids_scratch_.reserve(n);
    logits_scratch_.reserve(n);
    probs_scratch_.reserve(n);
}

NEXTTOK_DECL void candidates::fill_order_() {
    order_.resize(size());
    std::iota(order_.begin(), order_.end(), std::uint32_t{0});
}

NEXTTOK_DECL void candidates::select_top_(std::size_t n) {
    if (n * heap_ratio_ <= size()) {
        select_top_heap_(n);
        return;
    }
    fill_order_();
    const auto mid = order_.begin() + static_cast<std::ptrdiff_t>(n);
    std::nth_element(order_.begin(), mid - 1, order_.end(), rank_order_{this});
    std::sort(order_.begin(), mid - 1, rank_order_{this});
}

NEXTTOK_DECL void candidates::select_top_heap_(std::size_t n) {
    const rank_order_ cmp{this};
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), std::uint32_t{0});
    std::make_heap(order_.begin(), order_.end(), cmp);
    float worst = logits[order_.front()];
    for (std::uint32_t pos = static_cast<std::uint32_t>(n); pos < size(); ++pos) {
        if (logits[pos] < worst || !cmp(pos, order_.front())) continue;
        std::pop_heap(order_.begin(), order_.end(), cmp);
        order_.back() = pos;
        std::push_heap(order_.begin(), order_.end(), cmp);
        worst = logits[order_.front()];
    }
    std::sort_heap(order_.begin(), order_.end(), cmp);
    order_.resize(size());  // callers may write the remainder behind the prefix
}

NEXTTOK_DECL void candidates::gather_(std::size_t n_out) {
    ids_scratch_.resize(n_out);
    logits_scratch_.resize(n_out);
    probs_scratch_.resize(n_out);
    for (std::size_t i = 0; i < n_out; ++i) {
        const std::uint32_t from = order_[i];
        ids_scratch_[i] = ids[from];
        logits_scratch_[i] = logits[from];
        probs_scratch_[i] = probs[from];
    }
    ids.swap(ids_scratch_);
    logits.swap(logits_scratch_);
    probs.swap(probs_scratch_);
}

}  // namespace nexttok
