#!/bin/sh
# docs/figures/compare_svg.sh OLD.svg NEW.svg - are two drawings of a run the same picture?
# Both files are cut into tokens: numbers, #rrggbb colours, and the text between them. The
# texts must be equal, token for token; numbers may differ by 1.5 plus 3% of their size (a
# pixel of a curve, the last digit of a log-probability); colours by 24 in each channel (a
# shade of a heatmap's cell). Anything else (another word, another element, another count of
# points) is a different picture. Prints the first differences and exits 1; exits 0 if alike.
# POSIX sh and awk only.
[ $# -eq 2 ] || { echo "usage: sh docs/figures/compare_svg.sh OLD.svg NEW.svg" >&2; exit 2; }
tokens() {
  awk '{
    line = $0
    while (line != "") {
      if (match(line, /#[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F]/) && RSTART == 1) { print "C " substr(line, 2, 6) }
      else if (match(line, /-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?/) && RSTART == 1) { print "N " substr(line, 1, RLENGTH) }
      else {
        # text up to the next number or colour
        n = match(line, /#[0-9a-fA-F]|-?[0-9]/)
        if (n == 0) { print "T " line; break }
        if (n == 1) { print "T " substr(line, 1, 1); line = substr(line, 2); continue }
        print "T " substr(line, 1, n - 1); line = substr(line, n); continue
      }
      line = substr(line, RLENGTH + 1)
    }
    print "T \n"
  }' "$1"
}
tokens "$1" > "${TMPDIR:-/tmp}/compare_svg.$$.a"
tokens "$2" > "${TMPDIR:-/tmp}/compare_svg.$$.b"
awk -v A="${TMPDIR:-/tmp}/compare_svg.$$.a" -v B="${TMPDIR:-/tmp}/compare_svg.$$.b" '
  function hex(h, i) { return index("0123456789abcdef", tolower(substr(h, i, 1))) - 1 }
  function channel(h, k) { return 16 * hex(h, 2 * k - 1) + hex(h, 2 * k) }
  function abs(x) { return x < 0 ? -x : x }
  BEGIN {
    while ((getline a < A) > 0) {
      if ((getline b < B) <= 0) { print "the new drawing is shorter"; bad++; break }
      ka = substr(a, 1, 1); kb = substr(b, 1, 1); va = substr(a, 3); vb = substr(b, 3); n++
      if (ka != kb) { print "token " n ": " va " against " vb; bad++ }
      else if (ka == "N") { if (abs(va - vb) > 1.5 + 0.03 * abs(va)) { print "number " n ": " va " against " vb; bad++ } }
      else if (ka == "C") { for (k = 1; k <= 3; k++) if (abs(channel(va, k) - channel(vb, k)) > 24) { print "colour " n ": #" va " against #" vb; bad++; break } }
      else if (va != vb) { print "text " n ": \"" va "\" against \"" vb "\""; bad++ }
      if (bad >= 5) break
    }
    if (!bad && (getline b < B) > 0) { print "the new drawing is longer"; bad++ }
    exit bad > 0
  }'
status=$?
rm -f "${TMPDIR:-/tmp}/compare_svg.$$.a" "${TMPDIR:-/tmp}/compare_svg.$$.b"
exit $status
