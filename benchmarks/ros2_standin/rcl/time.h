// timealign's stand-in for the declarations of rcl's time.h that rclcpp's Time and Duration
// use (see ../README.md): the value types, the clock kinds, the two unit macros, and
// rmw_time_t (rmw's, reached through rcl in a real install). Declarations only.
#ifndef TIMEALIGN_STANDIN_RCL_TIME_H
#define TIMEALIGN_STANDIN_RCL_TIME_H

#include <cstdint>

typedef std::int64_t rcl_time_point_value_t;
typedef std::int64_t rcl_duration_value_t;

// The enumerators in rcl's order: RCL_ROS_TIME is 1 in both.
typedef enum rcl_clock_type_e {
  RCL_CLOCK_UNINITIALIZED = 0,
  RCL_ROS_TIME,
  RCL_SYSTEM_TIME,
  RCL_STEADY_TIME
} rcl_clock_type_t;

typedef struct rcl_time_point_s {
  rcl_time_point_value_t nanoseconds;
  rcl_clock_type_t clock_type;
} rcl_time_point_t;

typedef struct rcl_duration_s {
  rcl_duration_value_t nanoseconds;
} rcl_duration_t;

typedef struct rmw_time_s {
  std::uint64_t sec;
  std::uint64_t nsec;
} rmw_time_t;

#define RCL_S_TO_NS(seconds) ((seconds) * (1000LL * 1000LL * 1000LL))
#define RCL_NS_TO_S(nanoseconds) ((nanoseconds) / (1000LL * 1000LL * 1000LL))

#endif  // TIMEALIGN_STANDIN_RCL_TIME_H
