// Many sequences at once: continuous batching over a paged KV cache (scheduler), and many prompts
// with one set of options (generate_batch).
#pragma once

#include <nexttok/batching/generate_batch.hpp>
#include <nexttok/batching/scheduler.hpp>
#include <nexttok/batching/scheduler_options.hpp>
