// The one place that defines nexttok's version; CMakeLists.txt reads it from here.
#pragma once

#define NEXTTOK_VERSION_MAJOR 0
#define NEXTTOK_VERSION_MINOR 1
#define NEXTTOK_VERSION_PATCH 0

namespace nexttok {
inline constexpr int version_major = NEXTTOK_VERSION_MAJOR;
inline constexpr int version_minor = NEXTTOK_VERSION_MINOR;
inline constexpr int version_patch = NEXTTOK_VERSION_PATCH;
inline constexpr const char* version_string = "0.1.0";
}  // namespace nexttok
