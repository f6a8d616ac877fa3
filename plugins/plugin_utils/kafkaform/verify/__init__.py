"""The testinfra checks `kafkaform verify` runs (pytest imports them as kafkaform.verify)."""
