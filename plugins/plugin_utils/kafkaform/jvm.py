"""JVM options of the JVMs kafkaform starts for seconds or minutes, not for the life of a service.

Kafka's command-line tools (the brokers' admin helper, the verifier, the drills) and the pipeline's
tools (generate, audit, latency) exit before code compiled by C2 pays back its compilation, and a
small heap never needs a parallel collector: C1 only and the serial collector take about half the
CPU time of the defaults here (BENCHMARKS.md). Services keep the JVM's defaults and the site's
options. The brokers' admin helper runs on the brokers without this package, with its own copy of
these options (roles/kafka_broker/files/kafkaform_tools.py); a unit test holds it to this one.
https://docs.oracle.com/en/java/javase/17/docs/specs/man/java.html
"""

from __future__ import annotations

#: Compile with C1 only, collect with the serial collector.
SHORT_LIVED = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
#: Kafka's command-line tools: a short-lived JVM with a small heap.
KAFKA_TOOL = ("-Xmx256m", *SHORT_LIVED)
