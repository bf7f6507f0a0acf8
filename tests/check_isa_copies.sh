#!/bin/sh
# tests/check_isa_copies.sh OBJECT... - the loops handed to for_isa (tensor/isa_loop.h) really
# are compiled for each instruction set: every copy for the avx2 or avx512 path has at least one
# instruction on 256- or 512-bit registers (ymm, zmm), which SSE code never names. A copy whose
# loop was not inlined into it (a helper the compiler kept out of line) would be a call to the
# build's own code, SSE2 in `make PORTABLE=1`, and fail here. (Not every copy uses 512 bits:
# lane_sum's sums are four vectors of 4 doubles by design.) x86-64 objects only; prints a note
# and exits 0 if objdump is missing or the objects hold no copies.
command -v objdump >/dev/null 2>&1 || { echo "check_isa_copies: objdump not found; not checked"; exit 0; }
status=0 copies=0
for obj in "$@"; do
  [ -f "$obj" ] || { echo "check_isa_copies: $obj: no such file" >&2; status=1; continue; }
  # One line per copy: its path, then how many instructions name a register of that width. A
  # copy the compiler split in two (its rarely taken part moved to a "[clone .cold]" of its own)
  # counts as one.
  report=$(objdump -d --no-show-raw-insn -C "$obj" | awk '
    /^[0-9a-f]+ <.*>:$/ {
      name = ""
      if ($0 !~ /isa_detail::run_avx(2|512)</) next
      name = $0
      sub(/^[0-9a-f]+ </, "", name); sub(/>:$/, "", name); sub(/ \[clone [^]]*\]$/, "", name)
      path[name] = (name ~ /run_avx512</) ? "avx512" : "avx2"
      if (!(name in wide)) wide[name] = 0
      next
    }
    name != "" && (/%ymm/ || (path[name] == "avx512" && /%zmm/)) { wide[name]++ }
    END { for (n in wide) print path[n], wide[n], n }')
  [ -n "$report" ] || continue
  copies=$((copies + $(printf '%s\n' "$report" | wc -l)))
  bad=$(printf '%s\n' "$report" | awk '$2 == 0')
  if [ -n "$bad" ]; then
    echo "check_isa_copies: $obj has copies without their instruction set's vectors:" >&2
    printf '%s\n' "$bad" | cut -c1-300 >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "check_isa_copies: $copies copies, each with its instruction set's vectors"
exit $status
