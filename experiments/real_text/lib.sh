# Sourced by experiments/real_text/run*.sh after common.sh: the real files' folder, and one training run per
# arm and seed (after `scratch`).

: "${NLIFORGE_DATA_DIR:?set NLIFORGE_DATA_DIR to the folder of the real data files (nliforge-data check)}"
export NLIFORGE_DATA_DIR

# run ARM SEED OVERRIDES...: one training run into $R/ARM/seedSEED; its wall time and exit status in
# $R/ARM/seedSEED.done; skipped when its metrics.csv exists (FRESH=0). COMMON holds the shared overrides.
run() {
    local arm=$1 s=$2; shift 2
    local dir="$R/$arm/seed$s" t0=$SECONDS
    if [ -f "$dir/metrics.csv" ]; then stamp "$arm seed $s: done before, kept"; return; fi
    stamp "$arm seed $s"
    mkdir -p "$R/$arm"; rm -rf "$dir"
    logged "$R/$arm/seed$s.log" nliforge-train "$@" seed="$s" "${COMMON[@]}" hydra.run.dir="$dir"
    echo "rc=0 wall=$((SECONDS - t0))" > "$R/$arm/seed$s.done"
}

