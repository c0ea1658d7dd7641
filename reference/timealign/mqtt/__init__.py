"""Live thin-edge.io measurements from an MQTT broker (spec/mqtt.md): the pure reading of a
message (:mod:`timealign.mqtt.thinedge`) and the durable spool (:mod:`timealign.mqtt.spool`)."""
