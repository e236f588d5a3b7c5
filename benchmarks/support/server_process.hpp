// A child process that serves HTTP, as the benchmarks start the `server` program: started with its
// stdout on a pipe (read until its "server listening on http://HOST:PORT" line) and its stderr in a
// log file; stopped (SIGTERM, then SIGKILL after a grace period) by the destructor. The child also
// gets SIGKILL when this process dies (PR_SET_PDEATHSIG), so it never outlives a crashed benchmark.
// Not thread-safe; construct and destroy it on the thread that runs the benchmarks (the death
// signal follows the thread that forked).
#pragma once

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nexttok::bench {

class server_process {
public:
    // Runs argv[0] with argv (argv[0] is a path; no PATH lookup) and waits up to `timeout` for the
    // listening line. Throws std::runtime_error, with the end of the log, when the program cannot be
    // started, exits, or prints no such line in time.
    server_process(const std::vector<std::string>& argv, const std::filesystem::path& log_path,
                   std::chrono::seconds timeout)
            : log_path_(log_path) {
        int out[2];
        if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (log_fd < 0) {
            ::close(out[0]);
            ::close(out[1]);
            throw std::runtime_error(log_path.string() + ": cannot open: " + std::strerror(errno));
        }
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        const pid_t parent = ::getpid();
        pid_ = ::fork();
        if (pid_ == 0) {  // the child: only async-signal-safe calls until exec
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) ::_exit(127);
            ::dup2(out[1], STDOUT_FILENO);
            ::dup2(log_fd, STDERR_FILENO);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(log_fd);
        if (pid_ < 0) {
            ::close(out[0]);
            throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        }
        stdout_fd_ = out[0];  // kept open to the end: the child never gets SIGPIPE on stdout
        try {
            wait_for_port(argv[0], timeout);
        } catch (...) {
            stop();
            throw;
        }
    }

    server_process(const server_process&) = delete;
    server_process& operator=(const server_process&) = delete;
    ~server_process() { stop(); }

    int port() const { return port_; }
    pid_t pid() const { return pid_; }

    // SIGTERM, up to `grace` for the exit, then SIGKILL. Idempotent.
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(10000)) {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            const auto deadline = std::chrono::steady_clock::now() + grace;
            int status = 0;
            while (::waitpid(pid_, &status, WNOHANG) == 0) {
                if (std::chrono::steady_clock::now() > deadline) {
                    ::kill(pid_, SIGKILL);
                    ::waitpid(pid_, &status, 0);
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            pid_ = -1;
        }
        if (stdout_fd_ >= 0) ::close(stdout_fd_);
        stdout_fd_ = -1;
    }

    // The last `n_lines` lines of the child's stderr.
    std::string log_tail(int n_lines = 10) const {
        std::ifstream in(log_path_);
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        std::ostringstream os;
        for (std::size_t i = lines.size() > static_cast<std::size_t>(n_lines) ? lines.size() - n_lines : 0;
             i < lines.size(); ++i)
            os << lines[i] << '\n';
        return os.str();
    }

private:
    void wait_for_port(const std::string& program, std::chrono::seconds timeout) {
        static constexpr std::string_view marker = "server listening on http://";
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        std::string out;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0)
                throw std::runtime_error(program + ": no '" + std::string(marker) + "HOST:PORT' line within " +
                                         std::to_string(timeout.count()) + " s; its log ends with:\n" + log_tail());
            pollfd p{stdout_fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 200))) > 0) {
                char buf[512];
                const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
                if (n > 0) out.append(buf, static_cast<std::size_t>(n));
            }
            const std::size_t at = out.find(marker);
            const std::size_t eol = at == std::string::npos ? at : out.find('\n', at);
            if (eol != std::string::npos) {
                const std::string address = out.substr(at + marker.size(), eol - at - marker.size());
                const std::size_t colon = address.rfind(':');
                port_ = colon == std::string::npos ? 0 : std::atoi(address.c_str() + colon + 1);
                if (port_ <= 0) throw std::runtime_error(program + ": cannot read the port in '" + address + "'");
                return;
            }
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                throw std::runtime_error(program + ": exited (status " +
                                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                                         ") before listening; its log ends with:\n" + log_tail());
            }
        }
    }

    std::filesystem::path log_path_;
    pid_t pid_ = -1;
    int stdout_fd_ = -1;
    int port_ = 0;
};

}  // namespace nexttok::bench
