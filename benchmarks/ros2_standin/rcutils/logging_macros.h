// timealign's stand-in for the rcutils logging macros the policy and rclcpp's time code use
// (see ../README.md): warnings and errors go to stderr, debug messages nowhere. The policy
// warns only about out-of-order input, which the benchmark's trace never has.
#ifndef TIMEALIGN_STANDIN_RCUTILS_LOGGING_MACROS_H
#define TIMEALIGN_STANDIN_RCUTILS_LOGGING_MACROS_H

#include <cstdio>

#define TIMEALIGN_STANDIN_LOG(...)  \
  do {                              \
    std::fprintf(stderr, __VA_ARGS__); \
    std::fputc('\n', stderr);       \
  } while (0)
#define RCUTILS_LOG_WARN_ONCE(...)       \
  do {                                   \
    static bool timealign_logged = false; \
    if (!timealign_logged) {             \
      timealign_logged = true;           \
      TIMEALIGN_STANDIN_LOG(__VA_ARGS__); \
    }                                    \
  } while (0)
#define RCUTILS_LOG_WARN(...) TIMEALIGN_STANDIN_LOG(__VA_ARGS__)
#define RCUTILS_LOG_ERROR(...) TIMEALIGN_STANDIN_LOG(__VA_ARGS__)
#define RCUTILS_LOG_DEBUG(...) \
  do {                         \
  } while (0)

#endif  // TIMEALIGN_STANDIN_RCUTILS_LOGGING_MACROS_H
