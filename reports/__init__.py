"""The result model (verdicts, divergences, transcripts) and its writers; ``reports.pipeline`` holds the Spark jobs."""
