// kernels/: the numeric building blocks (dot products, matmul per weight format, norms, RoPE,
// softmax) and the thread pool. They know nothing of models.
#pragma once

#include <nexttok/kernels/dot.hpp>
#include <nexttok/kernels/matmul.hpp>
#include <nexttok/kernels/ops.hpp>
#include <nexttok/kernels/thread_pool.hpp>
