// The options of a paged KV cache (paged_kv_cache.hpp) and the id of a sequence in it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nexttok {

// A sequence in a paged cache. Ids of released sequences are reused by later create()/fork() calls.
using seq_id = std::int32_t;

struct paged_cache_options {
    std::int64_t n_blocks = 0;     // blocks in the pool (> 0 required); memory is allocated as blocks are first used
    std::int64_t block_size = 16;  // positions per block
    std::int64_t max_seq_len = 0;  // positions one sequence may hold; 0: the shape's max_seq_len
    bool prefix_caching = true;    // keep full blocks keyed by their tokens for reuse by later sequences
    std::size_t max_bytes = 0;  // the most the whole pool (n_blocks blocks) may take; 0: the machine's physical memory
};

}  // namespace nexttok
