// timealign's stand-in for the umbrella header (see ../README.md): of all of rclcpp, the
// message_filters headers the benchmark includes use Time, Duration and Clock.
#ifndef TIMEALIGN_STANDIN_RCLCPP_RCLCPP_HPP
#define TIMEALIGN_STANDIN_RCLCPP_RCLCPP_HPP

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rclcpp/clock.hpp"
#include "rclcpp/duration.hpp"
#include "rclcpp/time.hpp"

#endif  // TIMEALIGN_STANDIN_RCLCPP_RCLCPP_HPP
