"""z-filtering (Wu et al., 2022, §3.2, Algorithm 1) of a set on its own."""
