// decoder/: the forward pass of every supported family, over one sequence or a ragged batch of
// sequences, each reading and writing its own KV cache.
#pragma once

#include <nexttok/decoder/decoder.hpp>
