#!/bin/sh
# Render the post to one self-contained HTML page.
#
#   sh post/render.sh IN.md OUT.html
#
# The page carries everything it shows: post/style.css and every figure are
# embedded (the stylesheet inline, the figures as data: URIs), math is MathML,
# and nothing is fetched when it is opened. Figures are looked up relative to
# the repository root (gemm.md says post/figures/NAME.svg), then next to IN.md,
# then in the current directory.
#
# Any warning from pandoc is an error: the output is written to a temporary
# file first and only moved to OUT.html when pandoc finished cleanly, so a
# failed render never leaves a fresh-looking OUT.html behind for make.
#
# Works with pandoc 2.17 (Debian 12), which spells "embed everything"
# --self-contained, and with newer versions, which call it --embed-resources.
set -eu

if [ "$#" -ne 2 ]; then
    echo "usage: sh post/render.sh IN.md OUT.html" >&2
    exit 2
fi
in=$1
out=$2

post=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$post")

if ! command -v pandoc >/dev/null 2>&1; then
    echo "render.sh: pandoc not found (Debian: apt-get install pandoc)" >&2
    exit 127
fi
if [ ! -f "$in" ]; then
    echo "render.sh: no such file: $in" >&2
    exit 2
fi

# pandoc 2.19 added --embed-resources; pandoc 3 warns that --self-contained
# is deprecated, and a warning fails this script, so pick by what it offers.
if pandoc --help | grep -q -- '--embed-resources'; then
    embed='--embed-resources'
else
    embed='--self-contained'
fi

# pandoc's markdown already has these on; naming them says what the post uses.
from=markdown
for ext in yaml_metadata_block raw_html markdown_in_html_blocks pipe_tables \
           footnotes tex_math_dollars fenced_code_attributes implicit_figures \
           auto_identifiers; do
    from=$from+$ext
done

# The page's language, unless the post's metadata names one.
lang=
if ! grep -q '^lang:' "$in"; then
    lang='--metadata=lang=en'
fi

outdir=$(dirname "$out")
tmp=$(mktemp "$outdir/.render.XXXXXX")
err=$(mktemp "${TMPDIR:-/tmp}/render-stderr.XXXXXX")
trap 'rm -f "$tmp" "$err"' EXIT

status=0
# $embed and $lang are single words or empty, so they are left unquoted.
# shellcheck disable=SC2086
pandoc "$in" \
    --from="$from" \
    --to=html5 \
    --standalone $embed \
    --resource-path="$root:$(dirname "$in"):." \
    --css="$post/style.css" \
    --lua-filter="$post/fragments.lua" \
    --mathml \
    --toc --toc-depth=3 \
    --highlight-style=kate \
    --preserve-tabs \
    --wrap=preserve \
    --fail-if-warnings \
    $lang \
    --output="$tmp" 2>"$err" || status=$?

if [ "$status" -ne 0 ] || [ -s "$err" ]; then
    cat "$err" >&2
    echo "render.sh: pandoc failed or warned (exit status $status); $out not written" >&2
    exit 1
fi

chmod 644 "$tmp"
mv -f "$tmp" "$out"
