"""The run: its options, targets, cases, verdicts and the files each run writes."""
