// tensor/: what a weight tensor is, below every other folder: its storage types (tensor_type, with
// ggml's block sizes), a typed view of its bytes (tensor_view), the byte layouts of the quantized
// blocks, the dispatch from a tensor's type to the C++ type of its elements, and llama.cpp's
// reference quantization of a row. The readers (io/), the models (model/) and the kernels
// (kernels/) all speak of tensors through it.
#pragma once

#include <nexttok/tensor/k_quant_blocks.hpp>
#include <nexttok/tensor/legacy_quant_blocks.hpp>
#include <nexttok/tensor/quant_blocks.hpp>
#include <nexttok/tensor/quantize.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>
#include <nexttok/tensor/weight_types.hpp>
