// timealign's stand-in for the generated message types builtin_interfaces/msg/Time and
// Duration (see ../../README.md): their two fields each, both here since they are alike
// (duration.hpp includes this file).
#ifndef TIMEALIGN_STANDIN_BUILTIN_INTERFACES_MSG_TIME_HPP
#define TIMEALIGN_STANDIN_BUILTIN_INTERFACES_MSG_TIME_HPP
#include <cstdint>
namespace builtin_interfaces {
namespace msg {
struct Time {
  std::int32_t sec = 0;
  std::uint32_t nanosec = 0;
};
struct Duration {
  std::int32_t sec = 0;
  std::uint32_t nanosec = 0;
};
}  // namespace msg
}  // namespace builtin_interfaces
#endif  // TIMEALIGN_STANDIN_BUILTIN_INTERFACES_MSG_TIME_HPP
