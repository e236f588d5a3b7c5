#!/usr/bin/env bash
# Makes the seed corpora of the fuzz targets from the shared data folder, at run time (nothing is
# copied into the repository): OUT_DIR/<target>/ for each target of tests/fuzz. Small files are
# copied, and smaller seeds are derived from them (a 1-layer llama2.c checkpoint and Hugging Face
# directory, tokenizer.json files, split inputs in each target's container layout).
# Usage: make_corpus.sh DATA_DIR OUT_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 DATA_DIR OUT_DIR" >&2
  exit 2
fi
data=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
for t in gguf safetensors_hf llama2c tokenizer_json spm_model tokenizer_bin encode_decode stop_strings \
         chat_template server_request tokenizer_merges; do
  mkdir -p "$out/$t"
done

copy_if() {  # copy_if SRC DEST: skip quietly when the data folder lacks the file
  [[ -f "$1" ]] && cp "$1" "$2" || true
}

# gguf: the small model and vocabulary files, one per tensor type and architecture.
for f in models/stories260K/stories260K.gguf models/random/tiny-q4_0.gguf models/random/tiny-q8_0.gguf \
         models/random/tiny-f16.gguf models/random/tiny-qwen2-f32.gguf models/random/tiny-gpt2-f32.gguf \
         models/random/small-q4_k_m.gguf models/random/rope-llama3-f32.gguf models/random/rope-yarn-qwen2-f32.gguf \
         models/random/mixed-dim384-q2_k.gguf models/llama-2-tiny-random/llama-2-tiny-random.gguf \
         tokenizers/llama.cpp-vectors/ggml-vocab-llama-spm.gguf; do
  copy_if "$data/$f" "$out/gguf/$(basename "$f")"
done
copy_if "$data/models/stories260K/stories260K.bin" "$out/llama2c/stories260K.bin"
copy_if "$data/models/stories260K/tok512.model" "$out/spm_model/tok512.model"
copy_if "$data/models/stories260K/tok512.bin" "$out/tokenizer_bin/tok512.bin"

python3 - "$data" "$out" <<'PY'
import json, os, random, struct, sys

data, out = sys.argv[1], sys.argv[2]
rng = random.Random(1)

def path(*p):
    return os.path.join(data, *p)

def write(target, name, content):
    if isinstance(content, str):
        content = content.encode()
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(content)

def floats(n):
    return struct.pack("<%df" % n, *[rng.uniform(-0.5, 0.5) for _ in range(n)])

# llama2c: a 1-layer checkpoint small enough for the fuzzer to mutate quickly (shared and untied classifier).
def llama2c(dim, hidden, layers, heads, kv_heads, vocab, seq):
    head = dim // heads
    kv = kv_heads * head
    n = abs(vocab) * dim + layers * (dim + dim * dim + 2 * dim * kv + dim * dim + dim + 3 * dim * hidden) + dim + seq * head
    if vocab < 0:
        n += -vocab * dim
    return struct.pack("<7i", dim, hidden, layers, heads, kv_heads, vocab, seq) + floats(n)
write("llama2c", "tiny-tied.bin", llama2c(8, 16, 1, 2, 1, 16, 8))
write("llama2c", "tiny-untied.bin", llama2c(8, 12, 2, 2, 2, -16, 4))

# gguf: 1-layer models of a few KB, whose headers the fuzzer reaches far more often than those of
# the MB-sized files (SentencePiece and byte-level BPE vocabularies, F32 and F16 weights).
def gguf(arch, tok_model, f16, tied):
    dim, hidden, heads, kv_heads, vocab = 8, 16, 2, 1, 16
    def s(x):
        x = x.encode()
        return struct.pack("<Q", len(x)) + x
    kvs = []
    def kv(key, t, payload):
        kvs.append(s(key) + struct.pack("<I", t) + payload)
    u32 = lambda k, v: kv(k, 4, struct.pack("<I", v))
    kv("general.architecture", 8, s(arch))
    for k, v in [("context_length", 16), ("embedding_length", dim), ("block_count", 1), ("feed_forward_length", hidden),
                 ("attention.head_count", heads), ("attention.head_count_kv", kv_heads), ("rope.dimension_count", dim // heads)]:
        u32(arch + "." + k, v)
    kv(arch + ".attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5))
    kv(arch + ".rope.freq_base", 6, struct.pack("<f", 10000.0))
    if tok_model == "llama":
        tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in (10, 32, 0xC3, 0xA9)] + ["▁", "a", "b", "▁a", "ab", "▁ab", "c", "▁c", "h"]
        types = [2, 3, 3] + [6] * 4 + [1] * 9
    else:
        tokens = ["a", "b", "c", "Ġ", "Ċ", "h", "e", "l", "o", "ab", "Ġa", "he", "ll", "llo", "hello", "<|endoftext|>"]
        types = [1] * 15 + [3]
    kv("tokenizer.ggml.model", 8, s(tok_model))
    if tok_model == "gpt2":
        kv("tokenizer.ggml.pre", 8, s("qwen2"))
        merges = ["a b", "Ġ a", "h e", "l l", "ll o", "he llo"]
        kv("tokenizer.ggml.merges", 9, struct.pack("<IQ", 8, len(merges)) + b"".join(s(m) for m in merges))
    kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(tokens)) + b"".join(s(t) for t in tokens))
    kv("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, len(tokens)) + struct.pack("<%df" % len(tokens), *[-float(i) for i in range(len(tokens))]))
    kv("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, len(tokens)) + struct.pack("<%di" % len(tokens), *types))
    u32("tokenizer.ggml.bos_token_id", 1 if tok_model == "llama" else 15)
    u32("tokenizer.ggml.eos_token_id", 2 if tok_model == "llama" else 15)
    kvd = kv_heads * dim // heads
    shapes = [("token_embd.weight", [dim, vocab]), ("blk.0.attn_norm.weight", [dim]), ("blk.0.attn_q.weight", [dim, dim]),
              ("blk.0.attn_k.weight", [dim, kvd]), ("blk.0.attn_v.weight", [dim, kvd]), ("blk.0.attn_output.weight", [dim, dim]),
              ("blk.0.ffn_norm.weight", [dim]), ("blk.0.ffn_gate.weight", [dim, hidden]), ("blk.0.ffn_up.weight", [dim, hidden]),
              ("blk.0.ffn_down.weight", [hidden, dim]), ("output_norm.weight", [dim])]
    if arch == "qwen2":
        shapes += [("blk.0.attn_q.bias", [dim]), ("blk.0.attn_k.bias", [kvd]), ("blk.0.attn_v.bias", [kvd])]
    if not tied:
        shapes.append(("output.weight", [dim, vocab]))
    infos, blob = b"", b""
    for name, shape in shapes:
        n = 1
        for d in shape:
            n *= d
        half = f16 and len(shape) == 2
        infos += s(name) + struct.pack("<I", len(shape)) + struct.pack("<%dQ" % len(shape), *shape)
        infos += struct.pack("<IQ", 1 if half else 0, len(blob))
        blob += struct.pack("<%de" % n, *[rng.uniform(-0.5, 0.5) for _ in range(n)]) if half else floats(n)
        blob += b"\0" * (-len(blob) % 32)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(shapes), len(kvs)) + b"".join(kvs) + infos
    return head + b"\0" * (-len(head) % 32) + blob
write("gguf", "tiny-llama-spm-f32.gguf", gguf("llama", "llama", False, False))
write("gguf", "tiny-llama-spm-f16-tied.gguf", gguf("llama", "llama", True, True))
write("gguf", "tiny-qwen2-bpe-f32.gguf", gguf("qwen2", "gpt2", False, True))

# safetensors_hf: [u16 length of config.json][config.json][model.safetensors].
def hf_input(config, tensors):
    header, blob = {"__metadata__": {"format": "pt"}}, b""
    for name, shape in tensors:
        n = 1
        for s in shape:
            n *= s
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(blob), len(blob) + 4 * n]}
        blob += floats(n)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the reference writer pads the header so that the data is aligned
    st = struct.pack("<Q", len(h)) + h + blob
    c = json.dumps(config, indent=1).encode()
    return struct.pack("<H", len(c)) + c + st

def hf_tensors(dim, hidden, layers, heads, kv_heads, vocab, tied):
    kv = kv_heads * (dim // heads)
    t = [("model.embed_tokens.weight", [vocab, dim]), ("model.norm.weight", [dim])]
    if not tied:
        t.append(("lm_head.weight", [vocab, dim]))
    for l in range(layers):
        p = "model.layers.%d." % l
        t += [(p + "input_layernorm.weight", [dim]), (p + "post_attention_layernorm.weight", [dim]),
              (p + "self_attn.q_proj.weight", [dim, dim]), (p + "self_attn.k_proj.weight", [kv, dim]),
              (p + "self_attn.v_proj.weight", [kv, dim]), (p + "self_attn.o_proj.weight", [dim, dim]),
              (p + "mlp.gate_proj.weight", [hidden, dim]), (p + "mlp.up_proj.weight", [hidden, dim]),
              (p + "mlp.down_proj.weight", [dim, hidden])]
    return t

if os.path.exists(path("models/stories260K/hf/config.json")):
    real = open(path("models/stories260K/hf/config.json"), "rb").read()
    st = open(path("models/stories260K/hf/model.safetensors"), "rb").read()
    write("safetensors_hf", "stories260K", struct.pack("<H", len(real)) + real + st)
    cfg = json.loads(real)
    cfg.update(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
               num_key_value_heads=1, vocab_size=16, max_position_embeddings=8)
    write("safetensors_hf", "tiny-tied", hf_input(cfg, hf_tensors(8, 16, 1, 2, 1, 16, True)))
    cfg.update(tie_word_embeddings=False, num_hidden_layers=2, rope_scaling={"rope_type": "linear", "factor": 2.0})
    write("safetensors_hf", "tiny-untied", hf_input(cfg, hf_tensors(8, 16, 2, 2, 1, 16, False)))
    q = dict(cfg, architectures=["Qwen2ForCausalLM"], model_type="qwen2")
    write("safetensors_hf", "tiny-qwen2-config-only", hf_input(q, hf_tensors(8, 16, 2, 2, 1, 16, False)))

# tokenizer_json / tokenizer_merges: GPT-2's vocabulary cut to its first 600 ids, with the merges
# that stay inside them.
def small_gpt2(limit=600):
    enc = json.load(open(path("tokenizers/gpt2/encoder.json"), encoding="utf-8"))
    keep = {t: i for t, i in enc.items() if i < limit}
    merges = []
    for line in open(path("tokenizers/gpt2/vocab.bpe"), encoding="utf-8").read().split("\n"):
        if not line or line.startswith("#version"):
            continue
        a, _, b = line.partition(" ")
        if a in keep and b in keep and (a + b) in keep:
            merges.append(line)
    return keep, merges

if os.path.exists(path("tokenizers/gpt2/encoder.json")):
    vocab, merges = small_gpt2()
    n = len(vocab)
    added = lambda i, c: {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    gpt2 = {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [added(n, "<|endoftext|>")], "normalizer": None, "pre_tokenizer": byte_level,
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                      "vocab": dict(vocab, **{"<|endoftext|>": n}), "merges": merges}}
    write("tokenizer_json", "gpt2-small.json", json.dumps(gpt2, ensure_ascii=False))
    llama3_regex = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                    r"|\s*[\r\n]+|\s+(?!\S)|\s+")
    llama3 = json.loads(json.dumps(gpt2))
    llama3["added_tokens"] = [added(n, "<|begin_of_text|>"), added(n + 1, "<|end_of_text|>")]
    llama3["model"]["vocab"] = dict(vocab, **{"<|begin_of_text|>": n, "<|end_of_text|>": n + 1})
    llama3["model"]["ignore_merges"] = True
    llama3["model"]["merges"] = [m.split(" ", 1) for m in merges]
    llama3["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": llama3_regex}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    llama3["post_processor"] = {"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [], "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [n], "tokens": ["<|begin_of_text|>"]}}}
    write("tokenizer_json", "llama3-small.json", json.dumps(llama3, ensure_ascii=False))
    qwen = json.loads(json.dumps(gpt2))
    qwen["normalizer"] = {"type": "NFC"}
    qwen["added_tokens"] = [added(n, "<|endoftext|>"), added(n + 1, "<|im_start|>"), added(n + 2, "<|im_end|>")]
    qwen["model"]["vocab"] = dict(vocab, **{"<|endoftext|>": n, "<|im_start|>": n + 1, "<|im_end|>": n + 2})
    write("tokenizer_json", "qwen2-small.json", json.dumps(qwen, ensure_ascii=False))

    enc = json.dumps(dict(vocab, **{"<|endoftext|>": n}), ensure_ascii=False).encode()
    bpe = ("#version: 0.2\n" + "\n".join(merges) + "\n").encode()
    for kind in range(3):  # the last byte picks the pre-tokenizer
        write("tokenizer_merges", "gpt2-small-%d" % kind, struct.pack("<I", len(enc))[:3] + enc + bpe + bytes([kind]))

# encode_decode: byte 0 the vocabulary, byte 1 the mode (bit 0 decode ids, bit 1 BOS, bit 2 specials).
texts = []
vectors = path("tokenizers/llama.cpp-vectors/ggml-vocab-llama-spm.gguf.inp")
if os.path.exists(vectors):
    texts = [t.strip("\n") for t in open(vectors, "rb").read().decode("utf-8").split("__ggml_vocab_test__")]
texts = [t for t in texts if t][:24] + ["Hello world", "<s>a</s><|endoftext|><|im_start|>", "h\u00e9llo \U0001f44b \u4f60\u597d\n\t"]
for v in range(7):
    for i, t in enumerate(texts):
        write("encode_decode", "text-%d-%02d" % (v, i), bytes([v, 4 * (i % 2) + 2 * (i % 3 == 0)]) + t.encode())
    write("encode_decode", "ids-%d" % v, bytes([v, 1]) + bytes(rng.randrange(256) for _ in range(64)))

# stop_strings: byte 0 = (number of stop strings - 1) | 4 when included, then strings and token texts split by NUL.
for i, parts in enumerate([["</s>", "\n\nUser:", "Hello", " there", "</", "s>", " more"],
                           ["aab", "a", "a", "a", "b"], ["\u00e9", "caf\u00c3", "\u00a9", "caf", "\u00e9!"],
                           ["###", "##", "#", "#", "x"]]):
    write("stop_strings", "seed-%d" % i, bytes([0 | 4 * (i % 2)]) + b"\0".join(p.encode() for p in parts))
write("stop_strings", "two", bytes([1]) + b"\0".join(s.encode() for s in ["END", "STOP", "xxEN", "DyySTO", "P"]))

# chat_template: [u16 length of the template][template][messages JSON].
import glob
for f in sorted(glob.glob(path("chat_templates", "*.json"))):
    d = json.load(open(f, encoding="utf-8"))
    tpl = d["template"].encode()
    for i, case in enumerate(d["cases"][:3]):
        msgs = json.dumps(case["messages"], ensure_ascii=False).encode()
        write("chat_template", "%s-%d" % (os.path.basename(f)[:-5], i), struct.pack("<H", len(tpl)) + tpl + msgs)
for i, tpl in enumerate(["{% for i in range(3) %}{{ i }}{% endfor %}",
                         "{% macro m(x) %}{{ x }}{% endmacro %}{{ m('a') ~ 'b' * 3 }}",
                         "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}",
                         "{{ messages | tojson }}{{ (messages[0].content | upper).split(' ') | join('-') }}"]):
    write("chat_template", "small-%d" % i, struct.pack("<H", len(tpl)) + tpl.encode() +
          b'[{"role": "user", "content": "hi there"}]')

# server_request: byte 0 bit 0 picks the endpoint (0 completions, 1 chat), the rest is the body.
bodies = [
    (0, {"model": "m", "prompt": "Once upon a time", "max_tokens": 16, "temperature": 0.7, "top_p": 0.9,
         "stop": ["\n", "END"], "seed": 42, "logprobs": 2, "logit_bias": {"13": -100}}),
    (0, {"prompt": [1, 2, 3, 400], "n": 2, "stream": True, "stream_options": {"include_usage": True}}),
    (1, {"model": "m", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
         "max_completion_tokens": 8, "logprobs": True, "top_logprobs": 3, "frequency_penalty": 0.5}),
    (1, {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
         "stop": "x", "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1, "ignore_eos": False, "n_probs": 5}),
]
for i, (kind, body) in enumerate(bodies):
    write("server_request", "body-%d" % i, bytes([kind]) + json.dumps(body).encode())
PY
chmod -R u+w "$out"
echo "seed corpora in $out:"
for d in "$out"/*/; do
  printf '  %-18s %4d files\n' "$(basename "$d")" "$(find "$d" -type f | wc -l)"
done
