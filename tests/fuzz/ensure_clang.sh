#!/bin/sh
# tests/fuzz/ensure_clang.sh CXX - make sure CXX (clang++) can build libFuzzer targets with
# AddressSanitizer and UndefinedBehaviorSanitizer before `make fuzz` compiles anything.
# On a Debian/Ubuntu machine where we are root, install the clang and libclang-rt-dev packages
# (the compiler and its sanitizer/fuzzer runtimes); otherwise stop with one line that says how.
cxx="${1:-clang++}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ensure_clang.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
probe() {
  printf '%s\n' '#include <cstddef>' '#include <cstdint>' \
    'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }' >"$tmp/probe.cpp"
  "$cxx" -fsanitize=fuzzer,address,undefined "$tmp/probe.cpp" -o "$tmp/probe" >/dev/null 2>&1
}
probe && exit 0
if [ "$cxx" = clang++ ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "clang++ with libFuzzer not found; installing Debian's clang and libclang-rt-dev packages"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-dev) >/dev/null
  probe && exit 0
  echo "error: installing clang and libclang-rt-dev did not give a clang++ that links -fsanitize=fuzzer" >&2
  exit 1
fi
echo "error: '$cxx' cannot build libFuzzer targets (-fsanitize=fuzzer,address,undefined); install clang with its runtimes (Debian/Ubuntu: sudo apt-get install clang libclang-rt-dev; macOS: brew install llvm) or run make fuzz FUZZ_CXX=/path/to/clang++" >&2
exit 1
