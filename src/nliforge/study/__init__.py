"""Studies: a comparison of training sets as one pre-registered YAML, run over worlds and judged by the
package's one verdict rule (`nliforge-study`, docs/studies.md).

schema/parts: the study file; ledger: attempts and their locked plans; runner: the nliforge-train
multiruns; gates: the runs' numbers and the gates; claims: intervals, p, Holm, verdict words; report: the
verdict's files; cli: the console script."""
