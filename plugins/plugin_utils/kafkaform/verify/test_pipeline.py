"""The pipeline's data path, end to end: events produced now land exactly once.

    kafkaform verify -i inventory/lab --checks pipeline

The one check that writes: it produces 500 events into the pipeline's topic (bounded, acks=all,
as the pipeline's own generator user) and runs the audit, which covers everything the pipeline
has consumed. Leave it out (`--checks spark,...`) where test events must not reach the sinks.
"""

from __future__ import annotations

import json
import shlex

import testinfra.host  # type: ignore[import-untyped]

from kafkaform.verify.conftest import Nodes

TOOL = "/usr/local/bin/kafkaform-pipeline"


def test_produced_events_land_exactly_once(nodes: Nodes) -> None:
    master: testinfra.host.Host = nodes("spark_masters", "Spark masters")[0].host
    produced = master.run(shlex.join([TOOL, "generate", "--count", "500", "--rate", "500",
                                      "--json"]) + " 2>/dev/null")
    assert produced.rc == 0, produced.stdout + produced.stderr
    audit = master.run(shlex.join([TOOL, "audit", "--wait", "180", "--json"]) + " 2>/dev/null")
    result = json.loads(audit.stdout.strip().splitlines()[-1])
    assert audit.rc == 0 and result["exactly_once"], result
    assert result["expected"] >= 500
    assert result["missing"] == result["duplicated"] == result["unexpected"] == 0
