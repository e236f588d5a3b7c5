// A user's program: includes the umbrella header from the installed package and checks the version.
#include <nexttok/nexttok.hpp>

#include <cstdio>
#include <cstring>

int main() {
    if (std::strcmp(nexttok::version_string, "0.1.0") != 0) {
        std::fprintf(stderr, "unexpected nexttok version %s\n", nexttok::version_string);
        return 1;
    }
    std::printf("nexttok %s\n", nexttok::version_string);
    return 0;
}
