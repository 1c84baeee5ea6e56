"""One folder per paper's pipeline (WANLI, DISCO, Z-Aug, z-filtering, NLI-Set's long text), each with its
stages, prompts, parsing, its own filters, its report and its offline stand-ins, over the shared core in
`nliforge.engine`."""
