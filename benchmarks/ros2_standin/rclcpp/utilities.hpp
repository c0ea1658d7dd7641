// timealign's stand-in for rclcpp's overflow checks (see ../README.md): whether x + y or
// x - y leaves T's range, the contract rclcpp's Time and Duration arithmetic relies on to
// throw std::overflow_error instead of wrapping. Written here from that contract.
#ifndef TIMEALIGN_STANDIN_RCLCPP_UTILITIES_HPP
#define TIMEALIGN_STANDIN_RCLCPP_UTILITIES_HPP

#include <limits>

namespace rclcpp {

template <typename T>
bool add_will_overflow(const T x, const T y) {
  return y > 0 && x > std::numeric_limits<T>::max() - y;
}

template <typename T>
bool add_will_underflow(const T x, const T y) {
  return y < 0 && x < std::numeric_limits<T>::min() - y;
}

template <typename T>
bool sub_will_overflow(const T x, const T y) {
  return y < 0 && x > std::numeric_limits<T>::max() + y;
}

template <typename T>
bool sub_will_underflow(const T x, const T y) {
  return y > 0 && x < std::numeric_limits<T>::min() + y;
}

}  // namespace rclcpp

#endif  // TIMEALIGN_STANDIN_RCLCPP_UTILITIES_HPP
