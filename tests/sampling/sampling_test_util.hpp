// Oracles and helpers shared by the sampling tests. The oracles are written independently of the
// library: plain std::stable_sort over ids in id order and double-precision softmax.
#pragma once

#include <nexttok/sampling/candidates.hpp>
#include <nexttok/types.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace nexttok::test {

// The ids of the candidate set, ascending (the set, whatever its order).
inline std::vector<token_id> id_set(const candidates& c) {
    std::vector<token_id> ids = c.ids;
    std::sort(ids.begin(), ids.end());
    return ids;
}

// Ids 0..n-1 stably sorted by logit descending: ties keep the lower id first.
inline std::vector<token_id> oracle_order(const std::vector<float>& logits) {
    std::vector<token_id> ids(logits.size());
    std::iota(ids.begin(), ids.end(), token_id{0});
    std::stable_sort(ids.begin(), ids.end(), [&](token_id a, token_id b) { return logits[a] > logits[b]; });
    return ids;
}

// softmax in double over the whole vector.
inline std::vector<double> oracle_softmax(const std::vector<float>& logits) {
    double max_l = -INFINITY;
    for (float l : logits) max_l = std::max(max_l, double(l));
    std::vector<double> p(logits.size());
    double sum = 0.0;
    for (std::size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp(double(logits[i]) - max_l);
    for (double& x : p) x /= sum;
    return p;
}

// Pearson's chi-square statistic of observed counts against expected probabilities (n draws).
inline double chi_square(const std::vector<int>& counts, const std::vector<double>& probs, int n) {
    double stat = 0.0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        const double expected = probs[i] * n;
        const double d = counts[i] - expected;
        stat += d * d / expected;
    }
    return stat;
}

// Reproducible test logits: std::mt19937's raw output is fixed by the standard (its distributions are
// not, so the conversion to float is done here).
class logit_source {
public:
    explicit logit_source(std::uint32_t seed) : gen_(seed) {}

    // Uniform in [lo, hi), 24-bit resolution.
    float uniform(float lo, float hi) { return lo + (hi - lo) * float(gen_() >> 8) * 0x1.0p-24f; }

    std::vector<float> logits(std::size_t n, float lo = -8.0f, float hi = 8.0f) {
        std::vector<float> v(n);
        for (float& x : v) x = uniform(lo, hi);
        return v;
    }

    // Logits drawn from a few integer levels, so that ties are everywhere.
    std::vector<float> tied_logits(std::size_t n, std::uint32_t levels) {
        std::vector<float> v(n);
        for (float& x : v) x = float(gen_() % levels);
        return v;
    }

private:
    std::mt19937 gen_;
};

}  // namespace nexttok::test
