// cache/: key/value storage for the decoder: the contiguous KV cache (in the decoder's Scalar or as
// q8_0) and the no-cache baseline.
#pragma once

#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/cache/no_cache.hpp>
#include <nexttok/cache/q8_0_kv_cache.hpp>
