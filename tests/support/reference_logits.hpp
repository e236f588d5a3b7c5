// Reads ../shared/data/reference/<model>.logits.txt: llama.cpp's logits for a prompt (lines
// "P <pos> <logit_0> ... <logit_{V-1}>"), the prompt's token ids (a "# prompt token ids:" comment)
// and 32 greedy continuation tokens (lines "G <id>").
#pragma once

#include <nexttok/types.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nexttok::test {

struct reference_logits {
    std::vector<token_id> prompt;
    std::vector<std::vector<float>> logits;  // (prompt position, vocab)
    std::vector<token_id> greedy;
};

inline reference_logits read_reference_logits(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    reference_logits r;
    std::string line;
    const std::string prompt_tag = "# prompt token ids:";
    while (std::getline(in, line)) {
        if (line.rfind(prompt_tag, 0) == 0) {
            std::istringstream ss(line.substr(prompt_tag.size()));
            for (token_id t; ss >> t;) r.prompt.push_back(t);
        } else if (!line.empty() && line[0] == 'P') {
            std::istringstream ss(line.substr(1));
            std::int64_t pos = 0;
            ss >> pos;
            if (pos != static_cast<std::int64_t>(r.logits.size()))
                throw std::runtime_error(path + ": positions out of order");
            std::vector<float> v;
            for (float f; ss >> f;) v.push_back(f);
            r.logits.push_back(std::move(v));
        } else if (!line.empty() && line[0] == 'G') {
            r.greedy.push_back(static_cast<token_id>(std::stol(line.substr(1))));
        }
    }
    return r;
}

// sqrt(mean((a - b)^2) / mean(b^2)) over all elements, as data/README.md defines it.
inline double relative_rms_error(const std::vector<float>& ours, const std::vector<float>& ref) {
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double e = static_cast<double>(ours[i]) - ref[i];
        num += e * e;
        den += static_cast<double>(ref[i]) * ref[i];
    }
    return std::sqrt(num / den);
}

inline std::int64_t argmax(const float* v, std::int64_t n) {
    std::int64_t best = 0;
    for (std::int64_t i = 1; i < n; ++i)
        if (v[i] > v[best]) best = i;
    return best;
}

}  // namespace nexttok::test
