// The architecture rows (model/architecture.hpp) that both loaders read: each family's tensor table
// has what its pieces need (a gate for SwiGLU, shifts for LayerNorm, a position table when positions
// are learned), each role once, the fused QKV before the roles it replaces, and the shapes the
// hyper-parameters give each role agree with the weights the decoder multiplies (model_weights.hpp).
// The end-to-end oracle of the tables is llama.cpp's logits for GGUF and Hugging Face files of each
// family (reference_logits_test.cpp, hf_loader_test.cpp).
#include <nexttok/model/architecture.hpp>
#include <nexttok/model/detail/weight_table.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace nexttok;

namespace {

const tensor_entry* entry(const architecture_traits& a, weight_role r) {
    for (const tensor_entry& e : a.tensors)
        if (e.role == r) return &e;
    return nullptr;
}

bool required(const architecture_traits& a, weight_role r) {
    const tensor_entry* e = entry(a, r);
    return e != nullptr && e->required;
}

}  // namespace

TEST(architecture_table, each_family_has_the_tensors_its_pieces_need) {
    using r = weight_role;
    for (const architecture_traits& a : known_architectures) {
        SCOPED_TRACE(std::string(a.name));
        std::set<weight_role> seen;
        bool qkv_seen = false, split_seen = false;
        for (const tensor_entry& e : a.tensors) {
            EXPECT_TRUE(seen.insert(e.role).second) << "role " << static_cast<int>(e.role) << " twice";
            if (e.role == r::attn_qkv) {
                EXPECT_FALSE(split_seen) << "the fused QKV must come before attn_q/k/v";
                qkv_seen = true;
            }
            split_seen = split_seen || detail::is_split_role(e.role);
            EXPECT_FALSE(e.hf_conv1d && detail::info(e.role).rows == detail::extent::none)
                << "a vector cannot be stored transposed";
        }
        for (weight_role need :
             {r::token_embd, r::output_norm, r::attn_norm, r::attn_output, r::ffn_norm, r::ffn_up, r::ffn_down})
            EXPECT_TRUE(required(a, need)) << "role " << static_cast<int>(need);
        // Q, K and V: required apart, or fused.
        EXPECT_TRUE(required(a, r::attn_qkv) ||
                    (required(a, r::attn_q) && required(a, r::attn_k) && required(a, r::attn_v)));
        EXPECT_EQ(qkv_seen, entry(a, r::attn_qkv) != nullptr);
        EXPECT_EQ(required(a, r::ffn_gate), a.mlp == mlp_kind::swiglu);
        EXPECT_EQ(entry(a, r::ffn_gate) != nullptr, a.mlp == mlp_kind::swiglu);
        const bool layer_norm = a.norm == norm_kind::layer;
        EXPECT_EQ(required(a, r::attn_norm_b), layer_norm);
        EXPECT_EQ(required(a, r::ffn_norm_b), layer_norm);
        EXPECT_EQ(required(a, r::output_norm_b), layer_norm);
        EXPECT_EQ(required(a, r::position_embd), a.positions == position_kind::learned);
        // Hugging Face's layout names every tensor the family must have, or its fused form.
        for (const tensor_entry& e : a.tensors) {
            if (e.required && !detail::is_split_role(e.role)) {
                EXPECT_FALSE(e.hf.empty()) << "role " << static_cast<int>(e.role);
            }
        }
        const tensor_entry* qkv = entry(a, r::attn_qkv);
        if (qkv == nullptr || qkv->hf.empty()) {
            for (weight_role split : {r::attn_q, r::attn_k, r::attn_v}) {
                const tensor_entry* s = entry(a, split);
                ASSERT_NE(s, nullptr) << "role " << static_cast<int>(split);
                EXPECT_FALSE(s->hf.empty()) << "role " << static_cast<int>(split);
            }
        }
    }
}

TEST(architecture_table, names_and_classes_are_unique) {
    std::set<std::string> names, classes;
    for (const architecture_traits& a : known_architectures) {
        EXPECT_TRUE(names.insert(std::string(a.name)).second) << a.name;
        for (std::string_view c : a.hf.classes)
            if (!c.empty()) {
                EXPECT_TRUE(classes.insert(std::string(c)).second) << c;
                ASSERT_TRUE(find_hf_architecture(c).has_value());
                EXPECT_EQ(find_hf_architecture(c)->name, a.name);
            }
        ASSERT_TRUE(find_architecture(a.name).has_value());
    }
    EXPECT_FALSE(find_hf_architecture("MambaForCausalLM").has_value());
    EXPECT_FALSE(find_architecture("mamba").has_value());
}

TEST(architecture_table, role_shapes_follow_the_hyper_parameters) {
    model_config c;
    c.vocab_size = 100, c.dim = 64, c.hidden_dim = 160, c.n_heads = 8, c.n_kv_heads = 2, c.head_dim = 16;
    c.max_seq_len = 512;
    using detail::info;
    using detail::size_of;
    auto shape = [&](weight_role r) {
        return std::pair{size_of(info(r).rows, c), size_of(info(r).cols, c)};
    };
    using p = std::pair<std::int64_t, std::int64_t>;
    EXPECT_EQ(shape(weight_role::token_embd), p(100, 64));
    EXPECT_EQ(shape(weight_role::position_embd), p(512, 64));
    EXPECT_EQ(shape(weight_role::attn_qkv), p(128 + 2 * 32, 64));
    EXPECT_EQ(shape(weight_role::attn_qkv_b), p(0, 128 + 2 * 32));
    EXPECT_EQ(shape(weight_role::attn_k), p(32, 64));
    EXPECT_EQ(shape(weight_role::attn_output), p(64, 128));
    EXPECT_EQ(shape(weight_role::ffn_gate), p(160, 64));
    EXPECT_EQ(shape(weight_role::ffn_down), p(64, 160));
    EXPECT_EQ(shape(weight_role::ffn_down_b), p(0, 64));
    EXPECT_EQ(info(weight_role::attn_v_b).gguf, "attn_v.bias");
    EXPECT_EQ(info(weight_role::ffn_down_b).gguf, "ffn_down.bias");
    EXPECT_EQ(std::size(detail::role_infos), static_cast<std::size_t>(weight_role::ffn_down_b) + 1);
}
