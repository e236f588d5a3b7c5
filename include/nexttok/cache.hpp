// cache/: key/value storage for the decoder: the contiguous KV cache (in the decoder's Scalar or as
// q8_0), the paged KV cache (a pool of blocks shared by many sequences, with prefix caching), its
// memory planner, and the no-cache baseline.
#pragma once

#include <nexttok/cache/contiguous_kv_cache.hpp>
#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/kv_planner.hpp>
#include <nexttok/cache/kv_shape.hpp>
#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/cache/paged_cache_options.hpp>
#include <nexttok/cache/paged_kv_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
