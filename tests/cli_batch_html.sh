#!/usr/bin/env bash
# summary.html in headless Chromium: the page's script runs without errors (it marks
# <body data-ok="1">), its sort self-test passes (#selftest sorts by every column both ways and
# checks the order), there is one row per scan, every thumbnail is an embedded data: URI and
# nothing is fetched from the network; no console errors. Skipped (77) only when Chromium is
# absent and $CI is unset. A screenshot is left in SCRATCH/summary.png.
# Usage: bash cli_batch_html.sh MRIRECON SCRATCH
. "$(dirname "$0")/batch_lib.sh"
CHROME=""
for c in chromium chromium-browser google-chrome; do
  if command -v $c > /dev/null 2>&1; then CHROME=$c; break; fi
done
if [ -z "$CHROME" ]; then
  if [ -z "${CI:-}" ]; then
    echo "SKIP: chromium not installed (apt-get install chromium)"
    exit 77
  fi
  fail "chromium is required in CI"
fi
for i in 1 2 3; do gen_scan "$S/in/scan$i.h5" $((31 + 10 * i)); done
printf 'not hdf5' > "$S/in/broken.h5"
"$MR" batch "$S/in" -o "$S/out" --iters 8 -q
expect_rc 1 $? "batch with one broken file"
page=$S/out/summary.html

# static checks: self-contained
grep -qiE '<(script|link|img)[^>]+(src|href)="(https?:)?//' "$page" && fail "summary.html refers to the network"
n_img=$(grep -o '<img ' "$page" | wc -l)
n_data=$(grep -o 'src="data:image/png;base64,' "$page" | wc -l)
[ "$n_img" = 6 ] && [ "$n_data" = 6 ] || fail "expected 6 embedded thumbnails, got $n_img <img>, $n_data data: URIs"
ok "6 thumbnails embedded as data: URIs"

chrome() {
  timeout 60 "$CHROME" --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$S/profile" "$@"
}
chrome --enable-logging=stderr --v=0 --dump-dom "file://$page#selftest" > "$S/dom.html" 2> "$S/chrome.log"
[ -s "$S/dom.html" ] || fail "chromium produced no DOM: $(tail -5 "$S/chrome.log")"
body=$(grep -o '<body[^>]*>' "$S/dom.html" | head -1)
echo "$body" | grep -q 'data-ok="1"' || fail "the page's script did not run to its end: $body"
echo "$body" | grep -q 'data-selftest="pass"' || fail "sorting self-test did not pass: $body"
ok "script ran, sort self-test passed: $body"
rows=$(grep -o '<tr class="scan' "$S/dom.html" | wc -l)
[ "$rows" = 4 ] || fail "expected 4 scan rows, got $rows"
ok "$rows scan rows"
if grep -E 'CONSOLE|Uncaught|SyntaxError|ReferenceError|TypeError' "$S/chrome.log"; then
  fail "console errors in summary.html"
fi
ok "no console errors"
chrome --screenshot="$S/summary.png" --window-size=1200,900 "file://$page" > /dev/null 2>&1
[ -s "$S/summary.png" ] || fail "no screenshot"
ok "screenshot $S/summary.png"
echo "cli_batch_html: all checks passed in $((SECONDS - t0)) s"
