#!/usr/bin/env bash
# Builds the libFuzzer targets into $FUZZ_BUILD (default .build-fuzz at the repo root).
# HLSCore is compiled straight from Sources/HLSCore with swiftc (the main package exposes
# no library product, and SwiftPM cannot instrument a path dependency's targets on their
# own), instrumented with -sanitize=fuzzer,address so libFuzzer sees parser coverage.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${FUZZ_BUILD:-$here/.build}"   # git-ignored (.build/)
export PATH="/opt/swift/usr/bin:$PATH"
mkdir -p "$out/modules"
sanitize="${FUZZ_SANITIZE:-fuzzer,address}"
opt=(-O -g -sanitize="$sanitize" -parse-as-library)
# ld.gold prints one harmless "Cannot export local symbol '__asan_*'" line per ASan thunk.
quiet() { grep -v "Cannot export local symbol '__asan" >&2 || true; }
mapfile -t core < <(find "$root/Sources/HLSCore" -name '*.swift' | sort)

# Rebuild HLSCore only when a source is newer than the library.
lib="$out/modules/libHLSCore.a"
if [[ ! -f "$lib" ]] || [[ -n "$(find "$root/Sources/HLSCore" -name '*.swift' -newer "$lib" | head -1)" ]]; then
  echo "fuzz build: HLSCore (${#core[@]} files, -sanitize=$sanitize)" >&2
  swiftc "${opt[@]}" -module-name HLSCore -emit-module -emit-module-path "$out/modules/HLSCore.swiftmodule" \
    -emit-library -static -o "$lib" "${core[@]}" 2>&1 | quiet
fi
for t in playlist attributelist; do
  case $t in
    playlist) src="$here/Targets/PlaylistFuzz.swift" ;;
    attributelist) src="$here/Targets/AttributeListFuzz.swift" ;;
  esac
  bin="$out/fuzz-$t"
  if [[ ! -x "$bin" || "$src" -nt "$bin" || "$lib" -nt "$bin" ]]; then
    echo "fuzz build: fuzz-$t" >&2
    swiftc "${opt[@]}" -module-name "Fuzz_$t" -I "$out/modules" -L "$out/modules" -lHLSCore "$src" -o "$bin" 2>&1 | quiet
  fi
done
echo "$out"
