// timealign's stand-in (see ../README.md): rclcpp's time code throws only standard
// exceptions (std::runtime_error, std::overflow_error), declared here.
#ifndef TIMEALIGN_STANDIN_RCLCPP_EXCEPTIONS_HPP
#define TIMEALIGN_STANDIN_RCLCPP_EXCEPTIONS_HPP
#include <stdexcept>
#endif  // TIMEALIGN_STANDIN_RCLCPP_EXCEPTIONS_HPP
