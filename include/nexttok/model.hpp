// model/: hyper-parameters, weights and loaders (GGUF, Hugging Face safetensors, llama2.c, random).
#pragma once

#include <nexttok/model/architecture.hpp>
#include <nexttok/model/gguf_loader.hpp>
#include <nexttok/model/hf_loader.hpp>
#include <nexttok/model/llama2c_loader.hpp>
#include <nexttok/model/load_model.hpp>
#include <nexttok/model/load_options.hpp>
#include <nexttok/model/model.hpp>
#include <nexttok/model/model_config.hpp>
#include <nexttok/model/model_weights.hpp>
#include <nexttok/model/random_model.hpp>
#include <nexttok/model/tensor_check.hpp>
