// timealign's stand-in for the generated message type (see ../../README.md): the policy's
// traits test for a `header` of this type; the benchmark's message has none.
#ifndef TIMEALIGN_STANDIN_STD_MSGS_MSG_HEADER_HPP
#define TIMEALIGN_STANDIN_STD_MSGS_MSG_HEADER_HPP
#include <string>
#include "builtin_interfaces/msg/time.hpp"
namespace std_msgs {
namespace msg {
struct Header {
  builtin_interfaces::msg::Time stamp;
  std::string frame_id;
};
}  // namespace msg
}  // namespace std_msgs
#endif  // TIMEALIGN_STANDIN_STD_MSGS_MSG_HEADER_HPP
