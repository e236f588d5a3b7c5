// Vocabulary types shared by every module.
#pragma once

#include <cstdint>

namespace nexttok {

// A token id: an index into the vocabulary. Signed so that "none" (-1) is representable, as in llama.cpp.
using token_id = std::int32_t;

inline constexpr token_id no_token = -1;

}  // namespace nexttok
