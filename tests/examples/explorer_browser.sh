#!/bin/sh
# tests/examples/explorer_browser.sh - the attention explorer (`seqgrad attention --html`) in a
# real browser: Debian's Chromium, headless, runs the page's script and prints the document it
# built (--dump-dom), once per state the address asks for (#layer=L&head=H&focus=T), and takes a
# screenshot. The checks read what the page shows:
#   - every source and output token is on the page, and the title is the sentence and its translation;
#   - each row of the heatmap holds the weights of one output token: they sum to 1;
#   - switching the head changes the cells, and the mean of the heads is their mean;
#   - pointing at an output token (focus) shades the source tokens by its row and names the one it
#     looked at most;
#   - beam search's finished alternatives are listed, best score first.
#
#   sh tests/examples/explorer_browser.sh [BUILD] [SCREENSHOT.png] [MODEL SENTENCE]
#
# Without MODEL it trains its own (a small Transformer that reverses its input, a few seconds);
# make figures passes the book's en-zh Transformer and sentence, so the chapter's screenshot is
# this test's, on that model.
# Chromium is found on the PATH, or installed (apt-get, as root); where neither can be, the test
# says so in one line and exits 0: it is skipped, not failed. The screenshot (default
# BUILD/explorer.png) is the one the book shows (make figures copies it to docs/figures/).
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
SHOT=${2:-$BUILD/explorer.png}
NAME=explorer_browser

browser=""
for b in chromium chromium-browser; do command -v "$b" >/dev/null 2>&1 && browser=$(command -v "$b") && break; done
if [ -z "$browser" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "$NAME: installing Debian's chromium (apt-get install chromium) ..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1
  command -v chromium >/dev/null 2>&1 && browser=$(command -v chromium)
fi
if [ -z "$browser" ]; then
  echo "$NAME: skipped: no Chromium here (as root: apt-get install chromium; then run make browser-test)"
  exit 0
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/explorer.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT INT TERM
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { echo "$NAME: FAILED: $*" >&2; failed=$((failed + 1)); }

MODEL=${3:-}
SENTENCE=${4:-"c a d b"}
if [ -z "$MODEL" ]; then
  # A small Transformer (2 layers, 4 heads) that reverses its input: a few seconds of training.
  MODEL=$W/m.safetensors
  "$BUILD/seqgrad" train --task reverse --n 2000 --min-len 3 --max-len 6 --seed 5 --arch transformer --layers 2 \
    --heads 4 --dim 32 --ffn 64 --epochs 6 --threads 2 --out "$MODEL" >"$W/train.out" 2>&1 ||
    { tail -3 "$W/train.out" >&2; echo "$NAME: training the model failed" >&2; exit 1; }
fi
# shellcheck disable=SC2086
"$BUILD/seqgrad" attention --model "$MODEL" --beam 3 --html "$W/page.html" $SENTENCE >"$W/attention.out" 2>&1 ||
  { cat "$W/attention.out" >&2; echo "$NAME: seqgrad attention --html failed" >&2; exit 1; }

# The browser, as a test runs it: no sandbox (root), no GPU, no network, a profile of its own.
chrome() {  # OUTPUT-FLAG FRAGMENT
  "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$W/profile" --window-size=1100,760 \
    --virtual-time-budget=3000 "$1" "file://$W/page.html#$2" 2>"$W/chrome.err"
}
dom() {  # NAME FRAGMENT: the document the page built in that state, in $W/NAME
  chrome --dump-dom "$2" >"$W/$1"
  [ -s "$W/$1" ] || { tail -3 "$W/chrome.err" >&2; echo "$NAME: $browser printed no document for #$2" >&2; exit 1; }
}
# The cells' weights, one row per line: "t w0 w1 ..." (data-w of cell-T-S in order).
cells() {
  grep -o 'id="cell-[0-9]*-[0-9]*" data-w="[0-9.]*"' "$1" | sed 's/id="cell-\([0-9]*\)-\([0-9]*\)" data-w="\([0-9.]*\)"/\1 \2 \3/' |
    awk '!started || $1 != row { if (started) print line; started = 1; row = $1; line = $1 } { line = line " " $3 } END { if (started) print line }'
}

dom head0 "layer=1&head=0"
dom head1 "layer=1&head=1"
dom mean "layer=1&head=mean"
dom focus "layer=1&head=0&focus=1"
h0=$W/head0 h1=$W/head1 mean=$W/mean focus=$W/focus

# 1. The tokens and the title.
translation=$(sed -n 's/.*"translation":"\([^"]*\)".*/\1/p; s/.*translation: "\([^"]*\)".*/\1/p' "$W/page.html" | head -1)
missing=""
for tok in $SENTENCE; do grep -q "id=\"src-[0-9]*\"[^>]*>$tok</div>" "$h0" || missing="$missing $tok"; done
for tok in $translation '&lt;eos&gt;'; do grep -q "id=\"out-[0-9]*\"[^>]*>$tok</div>" "$h0" || missing="$missing $tok"; done
[ -z "$missing" ] && [ -n "$translation" ] && pass || fail "tokens not on the page:$missing (translation '$translation')"
grep -q "<h1 id=\"title\">$SENTENCE  →  $translation</h1>" "$h0" && pass || fail "the title is not '$SENTENCE  →  $translation'"

# 2. Every row of weights sums to 1 (one output token's attention over the source).
cells "$h0" >"$W/c0"
rows=$(wc -l <"$W/c0")
[ "$rows" -ge 5 ] && pass || fail "expected a row of cells per output token (5 or more), got $rows"
awk '{ s = 0; for (i = 2; i <= NF; i++) s += $i; if (s < 0.99 || s > 1.01) { print "row " $1 " sums to " s; bad = 1 } } END { exit bad }' "$W/c0" >&2 &&
  pass || fail "a row of the heatmap does not sum to 1"

# 3. Another head shows other cells; the mean is the mean of the heads (of the 4: check it against 0 and 1 and the page's data).
cells "$h1" >"$W/c1"
cmp -s "$W/c0" "$W/c1" && fail "head 0 and head 1 show the same cells" || pass
cells "$mean" >"$W/cm"
awk -v page="$W/page.html" 'BEGIN {
    while ((getline l < page) > 0) if (l ~ /^  layers: /) { sub(/^  layers: /, "", l); sub(/,$/, "", l); data = l }
    # layer 1 of [[layer0 heads], [layer1 heads]]: split off the layers by depth.
    depth = 0; layer = -1; head = -1; t = -1; s = 0; num = ""
    for (i = 1; i <= length(data); i++) {
      c = substr(data, i, 1)
      if (c == "[") { depth++; if (depth == 2) { layer++; head = -1 } else if (depth == 3) { head++; t = -1 } else if (depth == 4) { t++; s = 0 } }
      else if (c == "]" || c == ",") { if (num != "" && depth == 4 && layer == 1) { sum[t, s] += num; n[t, s]++ } if (num != "") s++; num = ""; if (c == "]") depth-- }
      else num = num c
    }
  }
  { for (i = 2; i <= NF; i++) { want = sum[$1, i - 2] / n[$1, i - 2]; if ($i - want > 0.0002 || want - $i > 0.0002) { print "mean cell " $1 "," i - 2 ": " $i " against " want; bad = 1 } } }
  END { exit bad }' "$W/cm" >&2 && pass || fail "the mean of the heads is not the mean of the page's heads"

# 4. Focus on output token 1: the source tokens are shaded by its row, and the status names its
#    largest weight.
row1=$(awk '$1 == 1' "$W/c0" | cut -d' ' -f2-)
shaded=$(grep -o 'id="src-[0-9]*" [^>]*data-w="[0-9.]*"' "$focus" | sed 's/.*data-w="\([0-9.]*\)"/\1/' | tr '\n' ' ' | sed 's/ $//')
[ -n "$row1" ] && [ "$shaded" = "$row1" ] && pass || fail "the focused token's source shades '$shaded' are not its row '$row1'"
grep -q 'class="tok focus" id="out-1"' "$focus" && pass || fail "output token 1 is not marked as focused"
grep -q '<div id="status">"[^"]*" looked at "' "$focus" && pass || fail "the status line does not say what the focused token looked at"

# 5. The beam's alternatives: a table, best score first, the first one the translation.
awk '/<table class="alts">/' "$h0" | grep -q '<tr class="chosen"><td>1</td><td>'"$translation"'</td>' && pass ||
  fail "the alternatives table does not start with the chosen translation"
grep -o '<tr class="[^"]*"><td>[0-9]*</td><td>[^<]*</td><td>[-0-9.]*</td><td>[-0-9.]*</td>' "$h0" |
  sed 's/.*<td>\([-0-9.]*\)<\/td>$/\1/' | awk 'NR > 1 && $1 > prev + 1e-9 { bad = 1 } { prev = $1; n++ } END { exit bad || n < 2 }' &&
  pass || fail "expected 2 or more alternatives, best score first"

# 6. The screenshot.
rm -f "$W/shot.png"
chrome --screenshot="$W/shot.png" "layer=1&head=mean&focus=2" >/dev/null
if [ -s "$W/shot.png" ] && [ "$(wc -c <"$W/shot.png")" -gt 10000 ]; then
  pass
  mkdir -p "$(dirname "$SHOT")" && cp "$W/shot.png" "$SHOT"
else
  fail "no screenshot (or an empty one) from $browser"
fi

echo "$NAME: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
