#!/bin/sh
# tests/ensure_doctest.sh DIR - make sure DIR/doctest/doctest.h exists before tests compile.
# On a Debian/Ubuntu machine where we are root, install the doctest-dev package; otherwise
# stop with one line that says how to get it.
dir="${1:-/usr/include}"
[ -f "$dir/doctest/doctest.h" ] && exit 0
if [ "$dir" = /usr/include ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "doctest not found; installing Debian's doctest-dev package"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq doctest-dev) >/dev/null
  [ -f "$dir/doctest/doctest.h" ] && exit 0
  echo "error: installing doctest-dev did not provide $dir/doctest/doctest.h" >&2
  exit 1
fi
echo "error: doctest not found at $dir/doctest/doctest.h; install it (Debian/Ubuntu: sudo apt-get install doctest-dev; macOS: brew install doctest) or run make with DOCTEST_INCLUDE=/path/to/folder/holding/doctest" >&2
exit 1
