"""Studies: a comparison of training sets as one pre-registered YAML, run over worlds and judged by the
package's one verdict rule (`nliforge-study`, docs/studies.md).

schema and parts: the study file, its gates and claims; ledger: attempts locked to a plan, the hash-chained
ledger; runner: the nliforge-train multiruns; gates: the runs' numbers and the gates' states; claims: world-unit
tests, Holm, verdict words; report: the verdict's files; commands and cli: the console script."""
