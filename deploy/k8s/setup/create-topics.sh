#!/bin/sh
# create-topics.sh - makes the Kafka topics the services use, once per
# cluster (docs/deploy.md, "Kafka topics"); the compose stack's kafka-topics
# service and the Kubernetes Job kafka-topics both run it with the Kafka
# image's kafka-topics.sh. Idempotent: a topic that exists is left as it is
# (partitions can only be raised, by hand: kafka-topics.sh --alter).
# Names: the services' defaults, unless the variables they read say otherwise
# (KAFKA_TOPIC, KAFKA_HISTORICAL_TOPIC, DEAD_LETTER_TOPIC: docs/configuration.md).
# Sizes: TOPIC_PARTITIONS, TOPIC_REPLICATION, TOPIC_MIN_INSYNC_REPLICAS and
# TOPIC_RETENTION_MS. A client properties file (SASL/SSL) is used when
# KAFKA_CLIENT_PROPERTIES names one that exists.
set -eu
: "${KAFKA_BROKERS:?the Kafka bootstrap servers}"
partitions=${TOPIC_PARTITIONS:-16}
replication=${TOPIC_REPLICATION:-3}
min_insync=${TOPIC_MIN_INSYNC_REPLICAS:-2}
retention_ms=${TOPIC_RETENTION_MS:-604800000} # 7 days: longer than any writer outage
bin=${KAFKA_BIN:-/opt/kafka/bin}
properties=${KAFKA_CLIENT_PROPERTIES:-/etc/kafka-client/client.properties}

topics() {
  if [ -f "$properties" ]; then
    "$bin/kafka-topics.sh" --bootstrap-server "$KAFKA_BROKERS" --command-config "$properties" "$@"
  else
    "$bin/kafka-topics.sh" --bootstrap-server "$KAFKA_BROKERS" "$@"
  fi
}

for topic in "${KAFKA_TOPIC:-events_plugin_ingestion}" \
  "${KAFKA_HISTORICAL_TOPIC:-events_plugin_ingestion_historical}" \
  "${DEAD_LETTER_TOPIC:-events_plugin_ingestion_dlq}"; do
  topics --create --if-not-exists --topic "$topic" --partitions "$partitions" \
    --replication-factor "$replication" --config "retention.ms=$retention_ms" \
    --config "min.insync.replicas=$min_insync"
  topics --describe --topic "$topic"
done
echo "create-topics: done (partitions $partitions, replication $replication, retention ${retention_ms} ms)"
