// The command line of the example programs: CLI11 parsing with one exit-status rule for all of them,
// --version, and llama.cpp's habits (generate):
//
//   - Exit status: 0 after --help or --version; 1 after a flag or value that is refused (CLI11's
//     message, or ours, naming it, on stderr after "error: "); the programs return 1 for every
//     error of the run too.
//   - llama.cpp's flags are read as it reads them where we have the setting (-cnv -> --chat, -sys ->
//     --system, -md -> --draft-model, -r -> --stop, --chat-template-file -> --chat-template, ...); flags
//     about a GPU, memory locking or batch sizes, which have no meaning here, are accepted (with their
//     value) and each prints one line "note: -ngl 99 ignored: ..." on stderr.
//   - A single-dash word that is neither ours nor llama.cpp's ("-xyz") is refused by name, never
//     split into one-letter flags (CLI11 would read -ngl as -n -g -l).
#pragma once

#include <nexttok/version.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace flags {

// How a llama.cpp flag is read.
enum class llama_flag_kind {
    rename,         // the same setting under our name: `to`
    ignore,         // a flag without a value, no meaning here: a note
    ignore_value,   // a flag with one value, no meaning here: a note
    ignore_toggle,  // a flag with an optional on/off/auto value (-fa): a note
};

struct llama_flag {
    std::string_view names;  // "-ngl,--gpu-layers,--n-gpu-layers"
    llama_flag_kind kind;
    std::string_view to_or_why;  // our flag (rename), or why it does not apply (the note)
};

inline constexpr std::string_view no_gpu = "nexttok runs on the CPU";

// The llama.cpp flags generate reads besides its own (llama.cpp's tools/main and common/arg.cpp).
inline constexpr std::array llama_flags{
    llama_flag{"-cnv,--conversation", llama_flag_kind::rename, "--chat"},
    llama_flag{"-no-cnv,--no-conversation", llama_flag_kind::ignore, "a plain completion is the default here"},
    llama_flag{"-sys,--system-prompt", llama_flag_kind::rename, "--system"},
    llama_flag{"--chat-template-file", llama_flag_kind::rename, "--chat-template"},
    llama_flag{"-md,--model-draft", llama_flag_kind::rename, "--draft-model"},
    llama_flag{"-r,--reverse-prompt", llama_flag_kind::rename, "--stop"},
    llama_flag{"--predict", llama_flag_kind::rename, "--n-predict"},
    llama_flag{"-ngl,--gpu-layers,--n-gpu-layers", llama_flag_kind::ignore_value, no_gpu},
    llama_flag{"-ngld,--gpu-layers-draft,--n-gpu-layers-draft", llama_flag_kind::ignore_value, no_gpu},
    llama_flag{"-sm,--split-mode", llama_flag_kind::ignore_value, no_gpu},
    llama_flag{"-mg,--main-gpu", llama_flag_kind::ignore_value, no_gpu},
    llama_flag{"-ts,--tensor-split", llama_flag_kind::ignore_value, no_gpu},
    llama_flag{"-dev,--device", llama_flag_kind::ignore_value, no_gpu},
    llama_flag{"-nkvo,--no-kv-offload", llama_flag_kind::ignore, no_gpu},
    llama_flag{"-fa,--flash-attn", llama_flag_kind::ignore_toggle,
               "attention is always computed in one fused pass over the cache here"},
    llama_flag{"-b,--batch-size", llama_flag_kind::ignore_value,
               "the prompt is prefilled in one call, in tiles the decoder chooses"},
    llama_flag{"-ub,--ubatch-size", llama_flag_kind::ignore_value,
               "the prompt is prefilled in one call, in tiles the decoder chooses"},
    llama_flag{"-tb,--threads-batch", llama_flag_kind::ignore_value, "--threads serves the prefill and the decoding"},
    llama_flag{"-np,--parallel", llama_flag_kind::ignore_value,
               "generate runs one sequence (see examples/batch and the server)"},
    llama_flag{"-cb,--cont-batching", llama_flag_kind::ignore,
               "generate runs one sequence (see examples/batch and the server)"},
    llama_flag{"--mlock", llama_flag_kind::ignore, "the model file is mapped read-only and not locked"},
    llama_flag{"--no-mmap", llama_flag_kind::ignore, "the model file is always mapped"},
    llama_flag{"--numa", llama_flag_kind::ignore_value, "no NUMA placement here"},
    llama_flag{"--jinja", llama_flag_kind::ignore, "chat templates are always rendered by the Jinja renderer"},
    llama_flag{"-co,--color", llama_flag_kind::ignore, "the output is not coloured"},
    llama_flag{"-mli,--multiline-input", llama_flag_kind::ignore, "--chat reads one turn per line"},
    llama_flag{"-i,--interactive,-if,--interactive-first", llama_flag_kind::ignore, "use --chat for a conversation"},
    llama_flag{"-st,--single-turn", llama_flag_kind::ignore, "--chat ends at the end of its input"},
    llama_flag{"--no-warmup", llama_flag_kind::ignore, "no warm-up run is made"},
    llama_flag{"-sp,--special", llama_flag_kind::ignore,
               "special tokens are never printed (--special parses them in the prompt)"},
    llama_flag{"--no-display-prompt", llama_flag_kind::ignore, "the prompt is printed before the continuation"},
    llama_flag{"--no-perf", llama_flag_kind::ignore, "the timings always go to stderr"},
    llama_flag{"-v,--verbose,--log-verbose", llama_flag_kind::ignore, "statistics always go to stderr"},
    llama_flag{"--log-disable", llama_flag_kind::ignore, "statistics always go to stderr"},
    llama_flag{"-lv,--verbosity,--log-verbosity", llama_flag_kind::ignore_value, "statistics always go to stderr"},
};

inline bool has_name(std::string_view names, std::string_view name) {
    while (!names.empty()) {
        const std::size_t comma = names.find(',');
        if (names.substr(0, comma) == name) return true;
        names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
    }
    return false;
}

inline const llama_flag* find_llama_flag(std::string_view name) {
    for (const llama_flag& f : llama_flags)
        if (has_name(f.names, name)) return &f;
    return nullptr;
}

// "-abc" (a dash, then two or more letters, digits or dashes, starting with a letter): a llama.cpp-style
// single-dash long flag, never a bundle of one-letter flags here.
inline bool is_single_dash_word(std::string_view a) {
    if (a.size() < 3 || a[0] != '-' || a[1] == '-' || !std::isalpha(static_cast<unsigned char>(a[1]))) return false;
    for (const char c : a.substr(1))
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    // "-n60", "-t2": a one-letter flag with its value attached.
    return !std::isdigit(static_cast<unsigned char>(a[2]));
}

// argv[1..] with llama.cpp's flags translated (or dropped, with a note in `notes`), for app.parse().
// Throws CLI::ParseError (exit status 1) for a single-dash word that is no flag.
inline std::vector<std::string> translate_llama_flags(const CLI::App& app, int argc, const char* const* argv,
                                                      std::vector<std::string>& notes) {
    // An option of ours that takes a value: the next argument is that value, even when it starts with a dash.
    const auto takes_value = [](const CLI::Option* o) {
        return o != nullptr && o->get_items_expected_max() > 0;
    };
    std::vector<std::string> out;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            for (; i < argc; ++i) out.emplace_back(argv[i]);
            break;
        }
        const std::size_t eq = a.starts_with("--") ? a.find('=') : std::string::npos;
        const std::string name = a.substr(0, eq);
        const bool attached = eq != std::string::npos;
        const CLI::Option* ours = a.starts_with("-") ? app.get_option_no_throw(name) : nullptr;
        if (ours == nullptr && a.starts_with("-")) {
            if (const llama_flag* f = find_llama_flag(name)) {
                const bool next_is_value = i + 1 < argc && !attached;
                switch (f->kind) {
                    case llama_flag_kind::rename: {
                        out.push_back(std::string(f->to_or_why) + (attached ? a.substr(eq) : ""));
                        if (takes_value(app.get_option_no_throw(std::string(f->to_or_why))) && next_is_value)
                            out.emplace_back(argv[++i]);
                        continue;
                    }
                    case llama_flag_kind::ignore:
                        notes.push_back("note: " + a + " ignored: " + std::string(f->to_or_why));
                        continue;
                    case llama_flag_kind::ignore_value:
                        if (!attached && !next_is_value)
                            throw CLI::ArgumentMismatch(name + " needs a value", CLI::ExitCodes::ArgumentMismatch);
                        notes.push_back("note: " + a + (attached ? "" : " " + std::string(argv[i + 1])) +
                                        " ignored: " + std::string(f->to_or_why));
                        if (!attached) ++i;
                        continue;
                    case llama_flag_kind::ignore_toggle: {
                        std::string value = attached ? a.substr(eq + 1) : "";
                        if (next_is_value) {
                            const std::string_view next = argv[i + 1];
                            if (next == "on" || next == "off" || next == "auto" || next == "1" || next == "0")
                                value = argv[++i];
                        }
                        notes.push_back("note: " + name + (value.empty() ? "" : " " + value) +
                                        " ignored: " + std::string(f->to_or_why));
                        continue;
                    }
                }
            }
            if (is_single_dash_word(a))
                throw CLI::ExtrasError(
                    "unknown flag " + a + " (one-letter flags take one dash, long ones two; see --help)",
                    CLI::ExitCodes::ExtrasError);
        }
        out.push_back(a);
        if (takes_value(ours) && !attached && i + 1 < argc) out.emplace_back(argv[++i]);
    }
    return out;
}

// --version: "<program> (nexttok 0.1.0)".
inline void add_version_flag(CLI::App& app, const std::string& program) {
    app.set_version_flag("--version", program + " (nexttok " + nexttok::version_string + ")");
}

// -m/--model and --tokenizer, as every example program reads them (both checked to exist). With
// `required`, --model must be given; without, its absence means the built-in random demo model.
inline void add_model_flags(CLI::App& app, std::string& model_path, std::string& tokenizer_path,
                            bool required = false) {
    CLI::Option* model = app.add_option("-m,--model", model_path,
                                        required ? "GGUF file, Hugging Face directory or llama2.c checkpoint"
                                                 : "GGUF file, Hugging Face directory or llama2.c checkpoint "
                                                   "(default: built-in random demo model)");
    if (required) model->required();
    model->check(CLI::ExistingPath);
    app.add_option(
           "--tokenizer", tokenizer_path,
           "tokenizer.bin, tokenizer.json, tokenizer.model, a GGUF or a directory (needed with a llama2.c checkpoint)")
        ->check(CLI::ExistingPath);
}

// A refused command line: "error: <message>" on stderr; the exit status, 1.
inline int refuse_command_line(const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << "\nRun with --help for the flags.\n";
    return 1;
}

// Parses `args` (argv[1..] in order); returns -1 to go on, or the exit status: 0 after --help or
// --version (printed on stdout), 1 after a refused flag or value ("error: <CLI11's message>" on stderr).
inline int parse_command_line(CLI::App& app, std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector from its end
    try {
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return refuse_command_line(e);
    }
    return -1;
}

inline int parse_command_line(CLI::App& app, int argc, const char* const* argv) {
    return parse_command_line(app, std::vector<std::string>(argv + 1, argv + argc));
}

}  // namespace flags
