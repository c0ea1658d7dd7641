// timealign's stand-in for rclcpp::Clock (see ../README.md). The policy builds a
// `Clock().now()` receipt stamp for every message it is given (message_event.hpp), so the
// cost of that matters to a throughput figure: like upstream's Clock, this one allocates
// its state with `new` and hands it to a shared pointer (two allocations; upstream's Impl
// holds the rcl clock, a condition variable and two mutexes, initialised by
// rcl_clock_init), and now() reads the clock through a function pointer (upstream:
// rcl_clock_get_now, for the default system clock clock_gettime of CLOCK_REALTIME). It
// does not model ROS time overrides, jump callbacks or sleeping.
#ifndef TIMEALIGN_STANDIN_RCLCPP_CLOCK_HPP
#define TIMEALIGN_STANDIN_RCLCPP_CLOCK_HPP

#include <time.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "rcl/time.h"
#include "rclcpp/time.hpp"

namespace rclcpp {

class Clock {
 public:
  explicit Clock(rcl_clock_type_t clock_type = RCL_SYSTEM_TIME)
      : state_(new State(clock_type)) {}

  Time now() const {
    return Time(state_->read(state_->type), state_->type);
  }

  rcl_clock_type_t get_clock_type() const noexcept { return state_->type; }

 private:
  static rcl_time_point_value_t read_clock(rcl_clock_type_t type) {
    timespec now{};
    clock_gettime(type == RCL_STEADY_TIME ? CLOCK_MONOTONIC : CLOCK_REALTIME, &now);
    return RCL_S_TO_NS(static_cast<rcl_time_point_value_t>(now.tv_sec)) + now.tv_nsec;
  }

  struct State {
    explicit State(rcl_clock_type_t clock_type) : type(clock_type) {}
    rcl_clock_type_t type;
    rcl_time_point_value_t (*read)(rcl_clock_type_t) = &Clock::read_clock;
    std::condition_variable cv;
    std::mutex wait_mutex;
    std::mutex clock_mutex;
  };

  std::shared_ptr<State> state_;
};

}  // namespace rclcpp

#endif  // TIMEALIGN_STANDIN_RCLCPP_CLOCK_HPP
