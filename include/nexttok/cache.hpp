// cache/: key/value storage for the decoder: the contiguous KV cache and the no-cache baseline.
#pragma once

#include <nexttok/cache/kv_cache.hpp>
#include <nexttok/cache/kv_storage.hpp>
#include <nexttok/cache/no_cache.hpp>
