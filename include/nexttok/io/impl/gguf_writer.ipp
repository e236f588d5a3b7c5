// The definitions of gguf_writer (gguf_writer.hpp): the serialization of values and the file layout.
#pragma once

#include <nexttok/error.hpp>
#include <nexttok/io/gguf_value.hpp>
#include <nexttok/io/gguf_writer.hpp>
#include <nexttok/tensor/tensor_type.hpp>
#include <nexttok/tensor/tensor_view.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nexttok {

namespace detail {

// A file written beside `path` under a name of its own, then renamed over `path` by commit(): a
// process that has the old file open or mapped (the writer itself, when it copies a mapped file's
// tensors into a file of the same name) keeps the old bytes, and a write that fails leaves the old
// file whole and no temporary file behind. A symbolic link at `path` is followed: the file it names
// is replaced, the link stays. The new file takes an existing file's permission bits.
class replacing_file {
public:
    explicit replacing_file(const std::filesystem::path& path) : path_(path), target_(resolved(path)) {
        struct stat old {};
        const bool exists = ::stat(target_.c_str(), &old) == 0;
        if (exists && !S_ISREG(old.st_mode)) fail("not a regular file");
        if (exists && ::access(target_.c_str(), W_OK) != 0) fail(std::strerror(errno));
        const std::filesystem::path dir = target_.has_parent_path() ? target_.parent_path() : ".";
        static std::atomic<unsigned> counter{0};
        for (int attempt = 0; fd_ < 0 && attempt < 100; ++attempt) {
            temp_ = dir / ("." + target_.filename().string() + ".nexttok-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter++));
            fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd_ < 0 && errno != EEXIST) break;
        }
        if (fd_ < 0) fail("cannot create " + temp_.string() + " to write into: " + std::strerror(errno));
        if (exists && ::fchmod(fd_, old.st_mode & 07777) != 0) abandon(std::strerror(errno));
    }
    ~replacing_file() {
        if (fd_ >= 0) {
            ::close(fd_);
            ::unlink(temp_.c_str());
        }
    }
    replacing_file(const replacing_file&) = delete;
    replacing_file& operator=(const replacing_file&) = delete;

    void write(const void* data, std::size_t n) {
        const char* p = static_cast<const char*>(data);
        while (n > 0) {
            const ssize_t k = ::write(fd_, p, std::min<std::size_t>(n, std::size_t{1} << 30));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) abandon(std::strerror(k < 0 ? errno : EIO));
            p += k;
            n -= static_cast<std::size_t>(k);
        }
    }

    void commit() {
        if (::close(std::exchange(fd_, -1)) != 0) abandon(std::strerror(errno));
        if (::rename(temp_.c_str(), target_.c_str()) != 0)
            abandon("cannot rename " + temp_.string() + " over it: " + std::strerror(errno));
    }

private:
    // `path` with its symbolic links followed to the file they name (which need not exist yet).
    static std::filesystem::path resolved(std::filesystem::path p) {
        for (int hops = 0; hops < 40; ++hops) {
            std::error_code ec;
            if (!std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec))) return p;
            const std::filesystem::path to = std::filesystem::read_symlink(p, ec);
            if (ec) return p;
            p = to.is_absolute() ? to : p.parent_path() / to;
        }
        return p;
    }
    [[noreturn]] void fail(const std::string& why) const {
        throw io_error(path_.string() + ": cannot write the GGUF file: " + why);
    }
    // Removes the temporary file (closing it first if it is open), then fails. `why` is built
    // before the call, from the errno of the step that failed.
    [[noreturn]] void abandon(const std::string& why) {
        if (fd_ >= 0) ::close(std::exchange(fd_, -1));
        ::unlink(temp_.c_str());
        fail(why);
    }

    std::filesystem::path path_, target_, temp_;
    int fd_ = -1;
};

}  // namespace detail

NEXTTOK_DECL void gguf_writer::add_strings(const std::string& key, const std::vector<std::string>& v) {
    begin_array(key, 8, v.size());
    for (const std::string& x : v) put_string(meta_, x);
}

NEXTTOK_DECL void gguf_writer::add_f32s(const std::string& key, const std::vector<float>& v) {
    begin_array(key, 6, v.size());
    for (const float x : v) put(meta_, x);
}

NEXTTOK_DECL void gguf_writer::add_i32s(const std::string& key, const std::vector<std::int32_t>& v) {
    begin_array(key, 5, v.size());
    for (const std::int32_t x : v) put(meta_, x);
}

NEXTTOK_DECL void gguf_writer::add_value(const std::string& key, const gguf_value& v) {
    std::string payload;
    put_value(payload, v);  // throws before anything is recorded
    begin(key, static_cast<std::uint32_t>(v.type));
    meta_ += payload;
}

NEXTTOK_DECL void gguf_writer::add_tensor(const std::string& name, tensor_type type, std::vector<std::uint64_t> ne,
                                          std::span<const std::byte> bytes) {
    const auto traits = find_tensor_type_traits(static_cast<std::uint32_t>(type));
    if (!traits || ne.empty() || ne.size() > 4)
        throw invalid_argument_error("gguf_writer: tensor '" + name + "': bad type or number of dimensions");
    std::uint64_t n = 1;
    for (std::uint64_t d : ne) n *= d;
    if (ne[0] % traits->block_size != 0 || n / traits->block_size * traits->block_bytes != bytes.size())
        throw invalid_argument_error("gguf_writer: tensor '" + name + "': " + std::to_string(bytes.size()) +
                                     " bytes do not match its shape and type " + to_string(type));
    tensors_.push_back({name, type, std::move(ne), bytes});
}

NEXTTOK_DECL void gguf_writer::add_tensor(const tensor_view& t) {
    add_tensor(t.name, t.type, std::vector<std::uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), t.bytes());
}

NEXTTOK_DECL void gguf_writer::write(const std::filesystem::path& path) const {
    std::string head;
    put(head, std::uint32_t{0x46554747});  // "GGUF"
    put(head, std::uint32_t{3});
    put(head, static_cast<std::uint64_t>(tensors_.size()));
    put(head, n_kv_);
    head += meta_;
    std::uint64_t offset = 0;  // from the start of the data section
    for (const tensor& t : tensors_) {
        put_string(head, t.name);
        put(head, static_cast<std::uint32_t>(t.ne.size()));
        for (std::uint64_t d : t.ne) put(head, d);
        put(head, static_cast<std::uint32_t>(t.type));
        put(head, offset);
        offset = padded(offset + t.bytes.size());
    }
    head.resize(padded(head.size()), '\0');
    detail::replacing_file out(path);
    out.write(head.data(), head.size());
    static constexpr char zeros[alignment] = {};
    for (const tensor& t : tensors_) {
        out.write(t.bytes.data(), t.bytes.size());
        out.write(zeros, padded(t.bytes.size()) - t.bytes.size());
    }
    out.commit();
}

NEXTTOK_DECL void gguf_writer::put_value(std::string& out, const gguf_value& v) {
    switch (v.type) {
        case gguf_type::u8:
            put(out, static_cast<std::uint8_t>(v.u));
            break;
        case gguf_type::i8:
            put(out, static_cast<std::int8_t>(v.i));
            break;
        case gguf_type::u16:
            put(out, static_cast<std::uint16_t>(v.u));
            break;
        case gguf_type::i16:
            put(out, static_cast<std::int16_t>(v.i));
            break;
        case gguf_type::u32:
            put(out, static_cast<std::uint32_t>(v.u));
            break;
        case gguf_type::i32:
            put(out, static_cast<std::int32_t>(v.i));
            break;
        case gguf_type::u64:
            put(out, v.u);
            break;
        case gguf_type::i64:
            put(out, v.i);
            break;
        case gguf_type::f32:
            put(out, static_cast<float>(v.f));
            break;
        case gguf_type::f64:
            put(out, v.f);
            break;
        case gguf_type::boolean:
            put(out, static_cast<std::uint8_t>(v.b));
            break;
        case gguf_type::string:
            put_string(out, std::string(v.str));
            break;
        case gguf_type::array:
            put(out, static_cast<std::uint32_t>(v.element_type));
            put(out, v.count);
            if (v.element_type == gguf_type::string)
                for (const std::string_view s : v.strings) put_string(out, std::string(s));
            else if (v.element_type == gguf_type::array)
                for (const gguf_value& item : v.items) put_value(out, item);  // each an array value itself
            else
                out.append(reinterpret_cast<const char*>(v.raw.data()), v.raw.size());
            break;
        default:
            throw invalid_argument_error("gguf_writer: value of unknown type " +
                                         std::to_string(static_cast<std::uint32_t>(v.type)));
    }
}

}  // namespace nexttok
