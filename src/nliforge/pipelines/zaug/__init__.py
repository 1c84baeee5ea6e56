"""Z-Aug (Wu et al., 2022): a GPT-2 generator trained with unlikelihood, then z-filtering."""
