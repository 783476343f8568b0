#!/usr/bin/env bash
# Builds the DocC documentation of the library products into one static site, BUILD/docs
# (.build/docs by default): the symbol graphs of the build (swift package dump-symbol-graph,
# which reuses what scripts/test.sh built, so only the graphs are new), each catalog
# (Sources/**/<Module>.docc) converted by the toolchain's docc with warnings as errors, and the
# archives merged under one landing page. Fails on a docc warning, and when a public symbol of
# WatchLinkTesting or WatchLinkClient declared in its source has no documentation comment of
# its own. Serve the site with `python3 -m http.server -d .build/docs` and open
# http://localhost:8000/documentation/; for a site served below the root of its host, set
# WATCHLINK_DOCS_BASE_PATH (e.g. /watchlink).
# Usage: scripts/docs.sh [--build-path PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

build_path=${WATCHLINK_BUILD_PATH:-.build}
if [ "${1:-}" = "--build-path" ]; then build_path=${2:?--build-path needs a path}; fi
# Every public symbol of these modules is documented.
fully_documented=(WatchLinkTesting WatchLinkClient)

version=$(scripts/version.sh)
site="$build_path/docs"
work=$(mktemp -d "${TMPDIR:-/tmp}/wl-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT

graphs=$(swift package --build-path "$build_path" dump-symbol-graph --skip-synthesized-members 2>&1 |
    tee "$work/dump.log" | sed -n 's/^Files written to //p')
[ -d "$graphs" ] || { cat "$work/dump.log" >&2; echo "docs: no symbol graphs" >&2; exit 1; }

catalogs=()
while IFS= read -r catalog; do catalogs+=("$catalog"); done < <(find Sources -name '*.docc' -type d | sort)
archives=()
for catalog in "${catalogs[@]}"; do
    module=$(basename "$catalog" .docc)
    mkdir -p "$work/graphs/$module"
    cp "$graphs/$module.symbols.json" "$work/graphs/$module/"
    cp "$graphs/$module"@*.symbols.json "$work/graphs/$module/" 2>/dev/null || true
    docc convert "$catalog" --additional-symbol-graph-dir "$work/graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.watchlink.$module" \
        --fallback-bundle-version "$version" --output-path "$work/$module.doccarchive" \
        --warnings-as-errors > "$work/$module.log" 2>&1 || {
        cat "$work/$module.log" >&2
        echo "docs: docc found problems in $catalog (above)" >&2
        exit 1
    }
    archives+=("$work/$module.doccarchive")
done

# The public symbols declared in the source (implicit ones, such as a raw-value enum's
# init(rawValue:), have no location) whose doc comment is missing or inherited from another
# module's declaration.
python3 - "$graphs" "${fully_documented[@]}" <<'PY'
import glob, json, os, sys
graphs, modules = sys.argv[1], sys.argv[2:]
missing = []
for module in modules:
    for path in [f"{graphs}/{module}.symbols.json"] + sorted(glob.glob(f"{graphs}/{module}@*.symbols.json")):
        for symbol in json.load(open(path))["symbols"]:
            if symbol["accessLevel"] not in ("public", "open") or "location" not in symbol:
                continue
            comment = symbol.get("docComment") or {}
            if comment.get("module") != module or not any(line["text"].strip() for line in comment.get("lines", [])):
                where = symbol["location"]["uri"].removeprefix("file://" + os.getcwd() + "/")
                missing.append(f"{where}:{symbol['location']['position']['line'] + 1}: {module}.{'.'.join(symbol['pathComponents'])}")
if missing:
    print("docs: public symbols without a documentation comment:", *missing, sep="\n  ", file=sys.stderr)
    sys.exit(1)
PY

rm -rf "$site"
docc merge "${archives[@]}" --output-path "$work/WatchLink.doccarchive" \
    --synthesized-landing-page-name WatchLink --synthesized-landing-page-kind Package > "$work/merge.log" 2>&1 || {
    cat "$work/merge.log" >&2
    echo "docs: docc merge failed" >&2
    exit 1
}
docc process-archive transform-for-static-hosting "$work/WatchLink.doccarchive" --output-path "$site" \
    ${WATCHLINK_DOCS_BASE_PATH:+--hosting-base-path "$WATCHLINK_DOCS_BASE_PATH"} > "$work/static.log" 2>&1 || {
    cat "$work/static.log" >&2
    echo "docs: the static site could not be made" >&2
    exit 1
}
echo "docs: ${#catalogs[@]} catalogs ($(basename -a "${catalogs[@]}" | sed 's/\.docc$//' | paste -sd' ')) in $site, WatchLink $version"
