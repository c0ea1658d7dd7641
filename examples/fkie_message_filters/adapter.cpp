// Conformance adapter (spec/conformance.md) around fkie/message_filters' ApproximateTime
// combiner policy (`fkie_message_filters::combiner_policies::ApproximateTime` inside a
// `Combiner`, the ROS 1 package at 4437729f), compiled unmodified from its headers. See
// README.md next to this file; check it with `--target ros1 --where age_penalty=0`.
//
// The protocol loop and the config checks follow examples/ros1_message_filters/adapter.cpp.
// What differs is `run`: messages go in through one `UserSource` per topic, sets come out of
// a `SimpleUserFilter` sink; the policy has no age penalty (a config with one is refused) and
// no reset between runs but `Combiner::reset()`, which a fresh combiner per run replaces.

#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>
#include <ros/console.h>
#include <ros/message_traits.h>
#include <ros/time.h>

// fkie's headers are not self-contained: the tuple helpers and ros::Time come first.
#define FKIE_MESSAGE_FILTERS_IGNORE_ROS_OK
#include <fkie_message_filters/helpers/tuple.h>
#include <fkie_message_filters/combiner_policies/approximate_time.h>
#include <fkie_message_filters/combiner.h>
#include <fkie_message_filters/simple_user_filter.h>
#include <fkie_message_filters/user_source.h>

using json = nlohmann::json;

// A header-less message: the policy reads the stamp through the TimeStamp trait.
struct Stamped {
  ros::Time stamp;
  std::string id;
};

namespace ros {
namespace message_traits {
template <>
struct HasHeader<Stamped> : public FalseType {};
template <>
struct TimeStamp<Stamped> {
  static ros::Time value(const Stamped& m) { return m.stamp; }
  static ros::Time* pointer(Stamped& m) { return &m.stamp; }
  static ros::Time const* pointer(const Stamped& m) { return &m.stamp; }
};
}  // namespace message_traits
}  // namespace ros

namespace {

namespace mf = fkie_message_filters;
using Source = mf::UserSource<Stamped>;

template <std::size_t... Is>
using CombinerOf = mf::Combiner<mf::combiner_policies::ApproximateTime,
                                std::enable_if_t<(Is >= 0), Source::Output>...>;

std::size_t topic_count(const json& config) {
  const json& topics = config.at("topics");
  return topics.is_array() ? topics.size() : topics.get<std::size_t>();
}

ros::Duration duration(const json& value) {
  ros::Duration d;
  d.fromNSec(value.get<std::int64_t>());
  return d;
}

json input_error(std::size_t index, const char* field, const std::string& why) {
  std::cerr << "input " << index << ": " << why << '\n';
  return {{"input", index}, {"kind", "error"}, {"field", field}, {"rule", "?"}};
}

// The policy from the trace's config: queue_size as fkie's queue limit, no maximum age
// (fkie's default is 1 s; the reference has none), the maximum interval as the maximum
// timespan, the lower bounds as minimum distances. An age penalty other than 0 is refused.
template <typename Policy>
Policy policy_from(const json& config, std::size_t topics) {
  const json& queue = config.at("queue_size");
  if (!queue.is_number_integer() || queue.get<std::int64_t>() < 1 ||
      queue.get<std::int64_t>() > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("queue_size must be an integer in [1, 2^32)");
  Policy policy;
  policy.set_max_queue_size(queue.get<std::size_t>(), boost::none);
  const json penalty = config.value("age_penalty", json());
  if (!penalty.is_null() && !(penalty.is_number() && penalty.get<double>() == 0))
    throw std::invalid_argument("fkie's ApproximateTime has no age penalty: age_penalty must be 0");
  const json interval = config.value("max_interval_duration", json());
  if (!interval.is_null()) {
    if (!interval.is_number_integer() || interval.get<std::int64_t>() < 0)
      throw std::invalid_argument("max_interval_duration must be an integer >= 0");
    policy.set_max_timespan(duration(interval));
  }
  const json bounds = config.value("inter_message_lower_bounds", json());
  if (!bounds.is_null()) {
    if (!bounds.is_array() || bounds.size() != topics)
      throw std::invalid_argument("inter_message_lower_bounds must list one bound per topic");
    for (std::size_t i = 0; i < topics; ++i) {
      if (!bounds[i].is_number_integer() || bounds[i].get<std::int64_t>() < 0)
        throw std::invalid_argument("a lower bound must be an integer >= 0");
      policy.set_min_distance(i, duration(bounds[i]));
    }
  }
  return policy;
}

// One run of a trace (up to its `end` input): a fresh combiner, its sources and its sink.
template <std::size_t... Is>
class Run {
 public:
  using Combiner = CombinerOf<Is...>;

  Run(const typename Combiner::Policy& policy, json& outputs, const std::size_t& current)
      : combiner_(policy) {
    combiner_.connect_to_sources(std::get<Is>(sources_)...);
    combiner_.connect_to_sink(sink_);
    sink_.set_processing_function([&outputs, &current](auto const&... messages) -> bool {
      json ids = json::array();
      (ids.push_back(messages.id), ...);
      outputs.push_back({{"input", current}, {"kind", "published"}, {"ids", ids}});
      return true;
    });
  }

  void add(std::size_t topic, const Stamped& message) {
    bool sent = false;
    ((topic == Is ? (std::get<Is>(sources_)(message), sent = true) : false), ...);
    if (!sent) throw std::invalid_argument("topic index out of range");
  }

 private:
  std::tuple<std::enable_if_t<(Is >= 0), Source>...> sources_;
  Combiner combiner_;
  mf::SimpleUserFilter<typename Combiner::Output> sink_;
};

template <std::size_t... Is>
json run(const json& config, const json& inputs, std::index_sequence<Is...>) {
  using R = Run<Is...>;
  const auto policy = policy_from<typename R::Combiner::Policy>(config, sizeof...(Is));
  json outputs = json::array();
  std::size_t current = 0;  // the input being fed: the sink runs synchronously inside add()
  auto active = std::make_unique<R>(policy, outputs, current);
  for (current = 0; current < inputs.size(); ++current) {
    const json& input = inputs[current];
    if (input.value("op", "") == "end") {  // the end of a run (AT-R17): start afresh
      active = std::make_unique<R>(policy, outputs, current);
      continue;
    }
    const json& topic = input.at("topic");
    const json& stamp = input.at("stamp");
    if (!topic.is_number_integer() || topic.get<std::int64_t>() < 0 ||
        topic.get<std::size_t>() >= sizeof...(Is)) {
      outputs.push_back(input_error(current, "topic", "topic index out of range"));
      continue;
    }
    if (!stamp.is_number_integer() || stamp.get<std::int64_t>() < 0) {
      outputs.push_back(input_error(current, "stamp", "stamp must be an integer >= 0"));
      continue;
    }
    Stamped message;
    message.id = input.at("id").get<std::string>();
    try {
      message.stamp.fromNSec(stamp.get<std::uint64_t>());  // throws from 2^32 s on
    } catch (const std::exception& error) {
      outputs.push_back(input_error(current, "stamp", error.what()));
      continue;
    }
    try {
      active->add(topic.get<std::size_t>(), message);
    } catch (const std::exception& error) {
      outputs.push_back(input_error(current, "stamp", error.what()));
    }
  }
  return outputs;
}

json answer(const json& trace) {
  json reply = {{"name", trace.at("name")}};
  try {
    const json& config = trace.at("config");
    if (config.value("arithmetic", json("ros2")) != "ros1")
      throw std::invalid_argument("this is ROS 1: the config must use \"arithmetic\": \"ros1\"");
    const json& inputs = trace.at("inputs");
    switch (topic_count(config)) {
      case 2: reply["outputs"] = run(config, inputs, std::make_index_sequence<2>{}); break;
      case 3: reply["outputs"] = run(config, inputs, std::make_index_sequence<3>{}); break;
      case 4: reply["outputs"] = run(config, inputs, std::make_index_sequence<4>{}); break;
      default: throw std::invalid_argument("this adapter combines 2 to 4 topics");
    }
  } catch (const std::exception& error) {
    reply["error"] = error.what();
  }
  return reply;
}

}  // namespace

int main() {
  ros::Time::init();
  if (ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Fatal))
    ros::console::notifyLoggerLevelsChanged();
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json reply;
    try {
      reply = answer(json::parse(line));
    } catch (const std::exception& error) {
      reply = {{"name", nullptr}, {"error", error.what()}};
    }
    std::cout << reply.dump() << '\n' << std::flush;
  }
  return 0;
}
