#!/bin/sh
# data/catalogs/fetch.sh - the real corpus, the same on every machine: the gettext catalogs of
# a fixed list of Debian packages, fetched and unpacked without installing anything.
#
#   sh data/catalogs/fetch.sh OUT          (then: seqgrad data --from-catalogs OUT/root/usr/share/locale ...)
#
# The packages are those whose catalogs the book's English -> Chinese results were made from,
# listed with their versions in data/catalogs/packages.txt (Debian 12, "bookworm"). Each .deb is
# fetched with `apt-get download` (no root needed, nothing installed) into OUT/debs and unpacked
# with `dpkg-deb -x` into OUT/root; only usr/share/locale is kept. OUT/versions.txt records the
# version of every package fetched; where one differs from packages.txt (a point release came
# out, or another Debian), the script says so: the corpus may then differ a little from the
# book's. Needs a Debian or Ubuntu system with apt sources and a network; on another system,
# see docs/10-transformer.md ("A real corpus") for what the files are and how to get them.
#
# Licences: each package's catalogs are under its own licence (GPL, LGPL, BSD-like and others:
# OUT/root/usr/share/doc/PACKAGE/copyright once fetched). The corpus is for training and
# studying models on this machine; it is not redistributed by this project.
set -eu

if [ $# -ne 1 ]; then
  echo "usage: sh data/catalogs/fetch.sh OUT   (OUT: a folder to create or reuse)" >&2
  exit 2
fi
for tool in apt-get dpkg-deb; do
  command -v "$tool" > /dev/null 2>&1 || {
    echo "fetch.sh: '$tool' not found; expected a Debian or Ubuntu system (see docs/10-transformer.md, "A real corpus")" >&2
    exit 2
  }
done
HERE=$(cd "$(dirname "$0")" && pwd)
LIST=$HERE/packages.txt
OUT=$1
mkdir -p "$OUT/debs" "$OUT/root"
OUT=$(cd "$OUT" && pwd)

# apt-get download writes into the current folder; a package already there is not fetched again.
cd "$OUT/debs"
# shellcheck disable=SC2046  # one word per package name, on purpose
if ! apt-get download $(cut -d' ' -f1 "$LIST") > "$OUT/apt.log" 2>&1; then
  echo "fetch.sh: apt-get download failed (the last lines of $OUT/apt.log follow); is there a network, and apt sources?" >&2
  tail -n 5 "$OUT/apt.log" >&2
  exit 1
fi

: > "$OUT/versions.txt"
for deb in "$OUT"/debs/*.deb; do
  dpkg-deb -x "$deb" "$OUT/unpacked"
  printf '%s %s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" >> "$OUT/versions.txt"
  if [ -d "$OUT/unpacked/usr/share/locale" ]; then
    mkdir -p "$OUT/root/usr/share"
    cp -R "$OUT/unpacked/usr/share/locale" "$OUT/root/usr/share/"
  fi
  for doc in "$OUT"/unpacked/usr/share/doc/*/copyright; do
    [ -f "$doc" ] || continue
    mkdir -p "$OUT/root/$(dirname "${doc#"$OUT"/unpacked/}")"
    cp "$doc" "$OUT/root/${doc#"$OUT"/unpacked/}"
  done
  rm -rf "$OUT/unpacked"
done
sort -o "$OUT/versions.txt" "$OUT/versions.txt"

# Versions that differ from the list: said, not fatal.
sort "$LIST" | diff - "$OUT/versions.txt" > "$OUT/versions.diff" || true
if [ -s "$OUT/versions.diff" ]; then
  echo "fetch.sh: some versions differ from data/catalogs/packages.txt (see $OUT/versions.diff); the corpus may differ a little from the book's"
fi
echo "fetch.sh: $(wc -l < "$OUT/versions.txt") packages, $(find "$OUT/root/usr/share/locale" -name '*.mo' | wc -l) catalogs in $OUT/root/usr/share/locale"
