#!/bin/sh
# docs/check_docs.sh - docs cannot drift: code and output shown in docs/*.md, in the Chinese
# edition docs/zh/*.md and in CONTRIBUTING.md must be real.
#
#   sh docs/check_docs.sh            check every chapter, both languages; exit 1 naming each mismatch
#   sh docs/check_docs.sh --update   rewrite the blocks from the sources and programs
#   sh docs/check_docs.sh FILE.md..  only these chapters (either mode)
#
# Run it from the repository root after `make` (the output blocks run built programs).
# A chapter marks a block with a comment on the line before its opening fence:
#
#   <!-- include: nn/attention/attention.cpp#scores -->       lines strictly between `// [docs:scores]`
#                                                   and the next `// [docs:end]` in that file
#   <!-- include: autograd/ops_math.cpp lines 60-70 -->        lines 60 to 70 of the file
#   <!-- output: build/examples/01_autograd_basics -->         that program's standard output
#
# Paths in these markers are relative to the repository root, in docs/zh/ as in docs/, so a
# Chinese chapter quotes the very blocks of its English original.
# Included text has its common indentation removed and any marker lines inside it dropped.
# Included files must be compiled by the build (tensor/ autograd/ nn/ data/ viz/ examples/
# bench/ tests/), or be one of the Python scripts a test runs (docs/*.py, run by
# tests/examples/to_pytorch.sh; their markers are `# [docs:NAME]` and `# [docs:end]`).
# Every ```cpp block must carry an include: C++ typed by hand could drift.
# Links between chapters ([text](file.md#anchor)) must point to a file and heading that exist;
# a link is resolved from the folder of the file it is in (docs/zh/ links to ../06-seq2seq.md).
# Anchors are made from headings as GitHub makes them: ASCII lowercased, spaces become '-',
# ASCII punctuation other than '-' and '_' dropped, non-ASCII letters (汉字) kept, and these
# non-ASCII marks dropped: · – — … ‘ ’ “ ” → ↔ × ² and the full-width ，。、：；？！（）《》「」【】～
# (other non-ASCII punctuation would be kept here, where GitHub drops it: avoid it in headings).
# Every docs/zh/NAME.md must translate an English docs/NAME.md (docs/zh/README.md excepted),
# and say what it says: the same blocks, figures, numbers and code spans (see below);
# every numbered English chapter must have its Chinese edition;
# and every file in architecture.md's "Where is each concept" table must exist, and every concept
# of docs/concepts.txt must have its row in that table.
# Every image a chapter shows must exist, with alt text and a caption line under it, and every
# numbered chapter must show one; run on the whole book, the figures are drawn again and compared
# with docs/figures/ (docs/figures/make_figures.sh --check: a minute).
# Every chapter (docs/NN-*.md) must link to glossary.md, where Chinese readers find the terms,
# and to notation.md, where every reader finds what the letters of a shape stand for.
# POSIX sh, awk, grep, sed, diff and cmp only.

set -u
cd "$(dirname "$0")/.." || exit 2

update=0
files=""
for arg in "$@"; do
  case "$arg" in
    --update) update=1 ;;
    -h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check_docs: unknown flag '$arg'; expected --update or chapter files" >&2; exit 2 ;;
    *) files="$files $arg" ;;
  esac
done
all_files=0
[ -n "$files" ] || { files=$(ls docs/*.md docs/zh/*.md CONTRIBUTING.md 2>/dev/null); all_files=1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_docs.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# Chapters whose hand-typed ```cpp blocks are reported as warnings instead of failures (none:
# every chapter includes its C++ from compiled files). Set it to try a draft chapter.
ALLOW_BARE_CPP=${ALLOW_BARE_CPP:-""}

problems=0
checked=0
fail() {  # chapter:line message
  echo "check_docs: $*" >&2
  problems=$((problems + 1))
}

# Lines strictly between `// [docs:NAME]` and the next `// [docs:end]`, marker lines dropped,
# common indentation removed. Exit 3 if the start marker is missing, 4 if it is not closed.
extract_marker() {  # file name
  awk -v name="$2" '
    function is_marker(s) { return s ~ /^[ \t]*(\/\/|#) \[docs:[^]]*\][ \t]*$/ }
    !inside && $0 ~ "^[ \t]*(//|#) \\[docs:" name "\\][ \t]*$" { inside = 1; found = 1; next }
    inside && $0 ~ /^[ \t]*(\/\/|#) \[docs:end\][ \t]*$/ { inside = 0; closed = 1; exit }
    inside && !is_marker($0) { line[++n] = $0 }
    END {
      if (!found) exit 3
      if (!closed) exit 4
      dedent(n)
    }
    function dedent(n,   i, min, k) {
      min = -1
      for (i = 1; i <= n; i++) {
        if (line[i] ~ /^[ \t]*$/) continue
        match(line[i], /^[ \t]*/)
        if (min < 0 || RLENGTH < min) min = RLENGTH
      }
      for (i = 1; i <= n; i++) print (line[i] ~ /^[ \t]*$/ ? "" : substr(line[i], min + 1))
    }
  ' "$1"
}

extract_lines() {  # file first last
  awk -v a="$2" -v b="$3" '
    NR >= a && NR <= b { line[++n] = $0 }
    END {
      if (n != b - a + 1) exit 5
      min = -1
      for (i = 1; i <= n; i++) {
        if (line[i] ~ /^[ \t]*$/) continue
        match(line[i], /^[ \t]*/)
        if (min < 0 || RLENGTH < min) min = RLENGTH
      }
      for (i = 1; i <= n; i++) print (line[i] ~ /^[ \t]*$/ ? "" : substr(line[i], min + 1))
    }
  ' "$1"
}

compiled_path() {
  case "$1" in
    tensor/*|autograd/*|nn/*|data/*|viz/*|examples/*|bench/*|tests/*|docs/*.py) return 0 ;;
    *) return 1 ;;
  esac
}

for md in $files; do
  [ -f "$md" ] || { fail "$md: no such file"; continue; }
  # Directives: "LINE<TAB>KIND<TAB>ARGUMENT", and hand-written ```cpp blocks: "LINE<TAB>bare".
  # (Directive-looking lines inside a fenced block are examples, not directives.)
  awk '
    !infence && /^<!-- (include|output): .* -->[ \t]*$/ {
      kind = $2; sub(/:$/, "", kind)
      arg = $0; sub(/^<!-- (include|output): /, "", arg); sub(/ -->[ \t]*$/, "", arg)
      printf "%d\t%s\t%s\n", NR, kind, arg
      pending = NR; next
    }
    /^```/ {
      if (!infence) {
        infence = 1; fence = $0; sub(/[^`].*$/, "", fence)
        if ($0 ~ /^```(cpp|c\+\+|cc)[ \t]*$/ && pending != NR - 1) printf "%d\tbare\t\n", NR
      } else if ($0 == fence) infence = 0
    }
  ' "$md" > "$tmp/directives"

  : > "$tmp/plan"  # "LINE<TAB>EXPECTED-FILE" for the rewrite
  n=0
  while IFS="$(printf '\t')" read -r line kind arg; do
    n=$((n + 1))
    where="$md:$line"
    if [ "$kind" = bare ]; then
      case " $ALLOW_BARE_CPP " in
        *" $md "*) echo "check_docs: warning: $where: a \`\`\`cpp block without an include directive" >&2 ;;
        *) fail "$where: a \`\`\`cpp block without an include directive (C++ shown in the docs must be included from a compiled file)" ;;
      esac
      continue
    fi
    want="$tmp/want.$n"
    case "$kind" in
      include)
        case "$arg" in
          *"#"*)
            src=${arg%%#*}; name=${arg#*#}
            if [ ! -f "$src" ]; then fail "$where: include $arg: no file $src"; continue; fi
            if ! compiled_path "$src"; then fail "$where: include $arg: $src is not part of the build"; continue; fi
            extract_marker "$src" "$name" > "$want"
            case $? in
              0) ;;
              3) fail "$where: include $arg: no line '// [docs:$name]' in $src"; continue ;;
              4) fail "$where: include $arg: '// [docs:$name]' in $src has no '// [docs:end]' after it"; continue ;;
              *) fail "$where: include $arg: could not read $src"; continue ;;
            esac
            ;;
          *" lines "*)
            src=${arg%% lines *}; range=${arg##* lines }
            first=${range%-*}; last=${range#*-}
            if [ ! -f "$src" ]; then fail "$where: include $arg: no file $src"; continue; fi
            if ! compiled_path "$src"; then fail "$where: include $arg: $src is not part of the build"; continue; fi
            case "$first$last" in *[!0-9]*|"") fail "$where: include $arg: expected 'lines A-B'"; continue ;; esac
            if ! extract_lines "$src" "$first" "$last" > "$want"; then
              fail "$where: include $arg: $src has fewer than $last lines"; continue
            fi
            ;;
          *) fail "$where: include $arg: expected 'path#marker' or 'path lines A-B'"; continue ;;
        esac
        ;;
      output)
        prog=${arg%% *}
        if [ ! -x "$prog" ]; then fail "$where: output $arg: $prog is not built (run make first)"; continue; fi
        # shellcheck disable=SC2086
        if ! $arg > "$want.raw" 2> "$tmp/stderr"; then
          fail "$where: output $arg: the program failed: $(tail -n 3 "$tmp/stderr")"; continue
        fi
        awk '{ print }' "$want.raw" > "$want"  # ensure a final newline
        ;;
    esac

    # The fenced block right after the directive line.
    awk -v at="$line" '
      NR == at + 1 { if ($0 !~ /^```/) { bad = 1; exit } fence = $0; sub(/[^`].*$/, "", fence); inside = 1; next }
      inside && NR > at + 1 { if ($0 == fence) { closed = 1; exit } print }
      END { if (bad) exit 6; if (!closed) exit 7 }
    ' "$md" > "$tmp/have.$n"
    status=$?
    if [ "$update" = 1 ]; then
      printf '%s\t%s\n' "$line" "$want" >> "$tmp/plan"
      continue
    fi
    checked=$((checked + 1))
    case $status in
      6) fail "$where: $kind $arg: expected a fenced block (\`\`\`) on the next line"; continue ;;
      7) fail "$where: $kind $arg: the fenced block is not closed"; continue ;;
    esac
    if ! cmp -s "$want" "$tmp/have.$n"; then
      if [ "$kind" = include ]; then
        fail "$where: the block does not match $arg (the source changed; check the prose, then run sh docs/check_docs.sh --update)"
      else
        fail "$where: the block is not the output of $arg (the program's output changed; check the prose, then run sh docs/check_docs.sh --update)"
      fi
      diff -u "$tmp/have.$n" "$want" | sed -e "1s|.*|--- $md (shown)|" -e "2s|.*|+++ $arg (real)|" -e 's/^/    /' | head -n 40 >&2
    fi
  done < "$tmp/directives"

  if [ "$update" = 1 ] && [ -s "$tmp/plan" ]; then
    # Rewrite: after each directive line, one fence with the expected text. An existing
    # block's opening fence (and language) is kept; a missing block is created as ```text.
    awk -v plan="$tmp/plan" '
      BEGIN { while ((getline l < plan) > 0) { split(l, p, "\t"); want[p[1]] = p[2] } }
      skip == 1 { if ($0 == fence) skip = 0; next }
      { print }
      (NR in want) {
        file = want[NR]
        if ((getline nextline) <= 0) nextline = ""
        if (nextline ~ /^```/) { open = nextline; fence = nextline; sub(/[^`].*$/, "", fence); skip = 1 }
        else { open = "```text"; fence = "```" }
        print open
        while ((getline l < file) > 0) print l
        close(file)
        print fence
        if (!skip && nextline != "") print nextline
      }
    ' "$md" > "$tmp/rewritten" || { fail "$md: rewrite failed"; continue; }
    if ! cmp -s "$md" "$tmp/rewritten"; then
      cat "$tmp/rewritten" > "$md"
      echo "check_docs: updated $md"
    fi
  fi
done

# A Chinese chapter translates an English one of the same name (the front page excepted), and
# every numbered English chapter, the glossary and the notation page have a Chinese edition.
for md in $files; do
  case "$md" in
    docs/[0-9]*.md|docs/glossary.md|docs/notation.md)
      [ -f "docs/zh/${md#docs/}" ] ||
        fail "$md: no Chinese edition docs/zh/${md#docs/}; every chapter is in both languages" ;;
  esac
done
for md in $files; do
  case "$md" in
    docs/zh/README.md) ;;
    docs/zh/*.md)
      [ -f "docs/${md#docs/zh/}" ] ||
        fail "$md: no English chapter docs/${md#docs/zh/}; a file in docs/zh/ translates the English file of the same name (or is docs/zh/README.md)" ;;
  esac
done

# A Chinese chapter says what its English original says: the same fenced blocks (code, output,
# equations, diagrams) in the same order, byte for byte; the same figures in the same order; the
# same numbers in the prose (as a multiset: a translation may reorder a sentence, but a number
# fixed in one language must be fixed in the other); and the same inline code spans (as a
# multiset). Numbers are runs of digits with at most one '.' inside, outside code spans, link
# targets and comment lines; write digits in both languages ("3 个", not "三个"). A code span
# must not break across lines (both files join it differently).
facets() {  # file what -> one item per line: blocks | figures | numbers | code
  awk -v what="$2" '
    /^```/ {
      if (!infence) { infence = 1; fence = $0; sub(/[^`].*$/, "", fence); if (what == "blocks") print "@@ " NR ": " $0; next }
      else if ($0 == fence) { infence = 0; next }
    }
    infence { if (what == "blocks") print; next }
    /^<!-- .* -->[ \t]*$/ { next }
    {
      line = $0
      if (what == "figures") {
        while (match(line, /!\[[^]]*\]\([^)]*\)/)) {
          img = substr(line, RSTART, RLENGTH); sub(/^.*\(/, "", img); sub(/\)$/, "", img); sub(/^.*\//, "", img)
          print img; line = substr(line, RSTART + RLENGTH)
        }
        next
      }
      rest = ""
      while (match(line, /`[^`]+`/)) {
        if (what == "code") print substr(line, RSTART, RLENGTH)
        rest = rest substr(line, 1, RSTART - 1) " "
        line = substr(line, RSTART + RLENGTH)
      }
      if (what == "code" && line ~ /`/) print "(a code span broken across lines at line " NR ")"
      line = rest line
      if (what != "numbers") next
      gsub(/\]\([^)]*\)/, "] ", line)
      while (match(line, /[0-9]+(\.[0-9]+)?/)) { print substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH) }
    }' "$1"
}
for md in $files; do
  case "$md" in docs/zh/README.md) continue ;; docs/zh/*.md) ;; *) continue ;; esac
  en="docs/${md#docs/zh/}"
  [ -f "$md" ] && [ -f "$en" ] || continue
  for what in blocks figures numbers code; do
    checked=$((checked + 1))
    if [ "$what" = blocks ]; then
      facets "$en" blocks | sed 's/^@@ [0-9]*: /@@ /' > "$tmp/en.$what"
      facets "$md" blocks | sed 's/^@@ [0-9]*: /@@ /' > "$tmp/zh.$what"
    elif [ "$what" = figures ]; then
      facets "$en" figures > "$tmp/en.$what"
      facets "$md" figures > "$tmp/zh.$what"
    else
      facets "$en" "$what" | LC_ALL=C sort > "$tmp/en.$what"
      facets "$md" "$what" | LC_ALL=C sort > "$tmp/zh.$what"
    fi
    if ! cmp -s "$tmp/en.$what" "$tmp/zh.$what"; then
      case "$what" in
        blocks) fail "$md: its fenced blocks differ from $en's (the same blocks, in the same order, byte for byte; translate around them, not inside)" ;;
        figures) fail "$md: its figures differ from $en's (the same files in the same order)" ;;
        numbers) fail "$md: the numbers in its prose differ from $en's (< only in English, > only in Chinese; write digits in both)" ;;
        code) fail "$md: its inline code spans differ from $en's (< only in English, > only in Chinese)" ;;
      esac
      diff "$tmp/en.$what" "$tmp/zh.$what" | grep '^[<>]' | head -n 8 | sed 's/^/    /' >&2
    fi
  done
done

# Figures: every image a chapter shows exists, has alt text, and is followed by its caption
# ("*Figure N.M: ...*", in Chinese "*图 N.M：...*"); every numbered chapter shows at least one.
# Whether each figure is what the code draws now is checked last (docs/figures/make_figures.sh).
for md in $files; do
  [ -f "$md" ] || continue
  dir=$(dirname "$md")
  case "$md" in docs/zh/*) caption='^\*图 [0-9]' ;; *) caption='^\*Figure [0-9]' ;; esac
  awk -v caption="$caption" '
    /^```/ { fence = !fence; next }
    fence { next }
    want { if ($0 ~ /^[ \t]*$/) next; if ($0 !~ caption) printf "%d\tcaption\n", at; want = 0 }
    /^!\[/ {
      alt = $0; sub(/^!\[/, "", alt); sub(/\]\(.*$/, "", alt)
      path = $0; sub(/^.*\]\(/, "", path); sub(/\).*$/, "", path)
      printf "%d\timage\t%s\t%s\n", NR, path, alt
      want = 1; at = NR
    }' "$md" > "$tmp/images"
  shown=0
  while IFS="$(printf '\t')" read -r line kind path alt; do
    if [ "$kind" = caption ]; then fail "$md:$line: a figure without a caption on the next line ('*Figure N.M: ...*', in Chinese '*图 N.M：...*')"; continue; fi
    shown=$((shown + 1))
    checked=$((checked + 1))
    [ -f "$dir/$path" ] || fail "$md:$line: the figure $path is missing (no file $dir/$path; make figures draws the generated ones)"
    [ -n "$alt" ] || fail "$md:$line: the figure $path has no alt text (![what it shows](...))"
  done < "$tmp/images"
  case "$md" in
    docs/[0-9]*.md|docs/zh/[0-9]*.md)
      [ "$shown" -gt 0 ] || fail "$md: shows no figure; every chapter shows at least one (docs/figures/)" ;;
  esac
done

# Links between chapters: every [text](file.md) and [text](file.md#anchor) must resolve, from
# the folder of the file that holds the link. Anchors are made from headings as GitHub makes
# them (see the header): run under LC_ALL=C, awk sees UTF-8 as bytes, lowercases only ASCII,
# and keeps every byte >= 0x80 except those of the listed non-ASCII punctuation.
anchors() {  # file: one anchor per heading
  LC_ALL=C awk '
    BEGIN { n = split("· – — … ‘ ’ “ ” → ↔ × ² ， 。 、 ： ； ？ ！ （ ） 《 》 「 」 【 】 ～", drop, " ") }
    /^```/ { fence = !fence; next }
    !fence && /^#+ / {
      h = $0; sub(/^#+ /, "", h); sub(/[ \t]+#*[ \t]*$/, "", h); h = tolower(h)
      for (i = 1; i <= n; i++) gsub(drop[i], "", h)
      out = ""
      for (i = 1; i <= length(h); i++) {
        c = substr(h, i, 1)
        if (c == " ") out = out "-"
        else if (c ~ /[a-z0-9_-]/ || !(c ~ /[\001-\177]/)) out = out c
      }
      print out
    }' "$1"
}
for md in $files; do
  [ -f "$md" ] || continue
  dir=$(dirname "$md")
  LC_ALL=C grep -o '](\([A-Za-z0-9_./-]*\.md\)\(#[^) ]*\)\{0,1\})' "$md" | sed 's/^](//; s/)$//' | LC_ALL=C sort -u |
  while IFS= read -r link; do
    target=${link%%#*}
    anchor=""
    case "$link" in *"#"*) anchor=${link#*#} ;; esac
    if [ ! -f "$dir/$target" ]; then
      echo "check_docs: $md: broken link to $link (no file $dir/$target)" >&2
      echo x >> "$tmp/badlinks"
      continue
    fi
    [ -n "$anchor" ] || continue
    if ! anchors "$dir/$target" | LC_ALL=C grep -qx -- "$anchor"; then
      echo "check_docs: $md: broken link to $link (no heading with that anchor in $dir/$target)" >&2
      echo x >> "$tmp/badlinks"
    fi
  done
done
if [ -s "$tmp/badlinks" ]; then
  problems=$((problems + $(wc -l < "$tmp/badlinks")))
fi

# Every chapter links to the glossary (English <-> Chinese terms): readers of the Chinese
# articles look a term up from wherever they are. And to the notation page: B, S, T, C, ...
# mean the same in every chapter, and the few exceptions are listed there.
for md in $files; do
  case "$md" in
    docs/[0-9]*.md)
      [ -f "$md" ] || continue
      grep -q '](\([^)]*/\)\{0,1\}glossary\.md[#)]' "$md" ||
        fail "$md: no link to the glossary (add a line like '**Terms:** English ↔ 中文 in [glossary.md](glossary.md).' under the chapter's header)"
      grep -q '](\([^)]*/\)\{0,1\}notation\.md[#)]' "$md" ||
        fail "$md: no link to the notation page (end the '**Terms:**' line with '; letters for shapes in [notation.md](notation.md).')"
      ;;
  esac
done

# The concept table of architecture.md: every row names one file, and it exists.
if [ -f docs/architecture.md ]; then
  awk '
    /^## / { inside = ($0 == "## Where is each concept"); next }
    inside && /^\| / && !/^\|---/ && !/^\| concept \|/ {
      n = split($0, cell, "|"); path = cell[3]; gsub(/^ *`|` *$/, "", path); print NR ": " path
    }' docs/architecture.md > "$tmp/concepts"
  [ -s "$tmp/concepts" ] || fail "docs/architecture.md: no table under '## Where is each concept'"
  while IFS= read -r row; do
    line=${row%%:*} path=${row#*: }
    checked=$((checked + 1))
    case "$path" in
      *' '*|*'`'*|'') fail "docs/architecture.md:$line: expected one file per concept, got '$path'" ;;
      *) [ -f "$path" ] || fail "docs/architecture.md:$line: no file '$path'" ;;
    esac
  done < "$tmp/concepts"
  # ... and every concept of docs/concepts.txt has its row (the first cell, word for word).
  awk '
    /^## / { inside = ($0 == "## Where is each concept"); next }
    inside && /^\| / && !/^\|---/ && !/^\| concept \|/ {
      n = split($0, cell, "|"); name = cell[2]; gsub(/^ +| +$/, "", name); print name
    }' docs/architecture.md > "$tmp/concept_names"
  if [ -f docs/concepts.txt ]; then
    while IFS= read -r concept; do
      case "$concept" in '#'*|'') continue ;; esac
      checked=$((checked + 1))
      grep -qxF -- "$concept" "$tmp/concept_names" ||
        fail "docs/architecture.md: no row for the concept '$concept' (docs/concepts.txt) in 'Where is each concept'"
    done < docs/concepts.txt
  else
    fail "docs/concepts.txt: missing (the concepts architecture.md's table must cover)"
  fi
fi

if [ "$update" = 1 ]; then
  [ "$problems" = 0 ] || { echo "check_docs: $problems problem(s) left; fix them and run again" >&2; exit 1; }
  exit 0
fi

# The figures, drawn again and compared (only when checking the whole book: it takes a minute).
if [ "$all_files" = 1 ]; then
  if sh docs/figures/make_figures.sh --check "${BUILD:-build}"; then checked=$((checked + 1)); else problems=$((problems + 1)); fi
fi
if [ "$problems" != 0 ]; then
  echo "check_docs: $problems problem(s) in docs/ ($checked blocks checked)" >&2
  exit 1
fi
echo "check_docs: $checked blocks and checks match their sources, programs and translations"
exit 0
