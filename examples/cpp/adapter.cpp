// Template: a conformance adapter (spec/conformance.md) for a C++ implementation.
//
// Replace `Implementation` with a thin wrapper around your synchronizer or batcher. As
// shipped it holds a toy "exact time" policy for ApproximateTime traces (publish when every
// topic's newest message has the same stamp), so that it builds and runs on its own and
// shows what a report of differences looks like:
//
//   g++ -std=c++17 -O2 -o build/adapter examples/cpp/adapter.cpp   # needs nlohmann/json
//   timealign conform approximate_time --cmd "./build/adapter" --observe upstream
//
// Protocol: one JSON line per trace on stdin (a timealign.vector/1 object without
// "outputs"); one JSON line per trace on stdout: {"name": N, "outputs": [...]}, each output
// tagged with the index of the input that produced it, or {"name": N, "error": "..."} when
// the implementation cannot take the trace. Flush after every line; log to stderr only.

#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using json = nlohmann::json;

// ---- your implementation goes here ---------------------------------------------------
class Implementation {
 public:
  // Build from the trace's config; throw std::invalid_argument to refuse the trace.
  explicit Implementation(const json& config) {
    const json& topics = config.at("topics");
    count_ = topics.is_array() ? topics.size() : topics.get<std::size_t>();
    if (count_ == 0) throw std::invalid_argument("needs at least one topic");
    newest_.assign(count_, std::nullopt);
  }

  // Feed one input ({"op": "message", "topic", "stamp", "id"} or {"op": "end"}); return its
  // outputs in vector form, without the "input" field (the loop below adds it).
  std::vector<json> feed(const json& input) {
    std::vector<json> outputs;
    if (input.at("op") == "end") {
      newest_.assign(count_, std::nullopt);
      return outputs;
    }
    const auto topic = input.at("topic").get<std::size_t>();
    if (topic >= count_) throw std::invalid_argument("topic out of range");
    newest_[topic] = Message{input.at("stamp").get<std::int64_t>(), input.at("id")};
    for (const auto& m : newest_)
      if (!m || m->stamp != newest_[0]->stamp) return outputs;
    json ids = json::array();
    for (const auto& m : newest_) ids.push_back(m->id);
    outputs.push_back({{"kind", "published"}, {"ids", ids}});
    newest_.assign(count_, std::nullopt);
    return outputs;
  }

 private:
  struct Message {
    std::int64_t stamp;
    std::string id;
  };
  std::size_t count_ = 0;
  std::vector<std::optional<Message>> newest_;
};
// ---- end of your implementation ------------------------------------------------------

static json answer(const json& trace) {
  json reply = {{"name", trace.at("name")}};
  std::optional<Implementation> instance;
  try {
    instance.emplace(trace.at("config"));
  } catch (const std::exception& error) {
    reply["error"] = error.what();
    return reply;
  }
  json outputs = json::array();
  const json& inputs = trace.at("inputs");
  for (std::size_t index = 0; index < inputs.size(); ++index) {
    try {
      for (json output : instance->feed(inputs[index])) {
        output["input"] = index;
        outputs.push_back(output);
      }
    } catch (const std::invalid_argument&) {  // a rejected input: report it and go on
      outputs.push_back({{"input", index}, {"kind", "error"}, {"field", "?"}, {"rule", "?"}});
    }
  }
  reply["outputs"] = outputs;
  return reply;
}

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << answer(json::parse(line)).dump() << '\n' << std::flush;
  }
  return 0;
}
