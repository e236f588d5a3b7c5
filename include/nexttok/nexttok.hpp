// The umbrella header: everything nexttok offers.
#pragma once

#include <nexttok/batching.hpp>
#include <nexttok/cache.hpp>
#include <nexttok/chat.hpp>
#include <nexttok/decoder.hpp>
#include <nexttok/error.hpp>
#include <nexttok/generation.hpp>
#include <nexttok/io.hpp>
#include <nexttok/kernels.hpp>
#include <nexttok/model.hpp>
#include <nexttok/sampling.hpp>
#include <nexttok/speculative.hpp>
#include <nexttok/stopping.hpp>
#include <nexttok/tensor.hpp>
#include <nexttok/tokenizer.hpp>
#include <nexttok/types.hpp>
#include <nexttok/version.hpp>
