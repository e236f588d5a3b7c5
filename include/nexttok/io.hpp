// io/: memory-mapped, bounds-checked reading of model files (GGUF, safetensors with its JSON header,
// raw checkpoints), JSON with limits on size and nesting, and a GGUF writer.
#pragma once

#include <nexttok/io/byte_reader.hpp>
#include <nexttok/io/gguf.hpp>
#include <nexttok/io/gguf_value.hpp>
#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/io/json_limits.hpp>
#include <nexttok/io/mapped_file.hpp>
#include <nexttok/io/safetensors.hpp>
#include <nexttok/tensor.hpp>  // tensor_type and tensor_view, which the readers return
