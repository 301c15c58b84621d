#!/usr/bin/env bash
# Builds the libFuzzer targets into $FUZZ_BUILD (default Tools/hardening/fuzz/.build, git-ignored).
# -O keeps Swift's overflow and conversion traps (only -Ounchecked drops them): an arithmetic
# overflow on a fuzzed number is a crash, as in hlsplay itself.
# Env: FUZZ_SOURCES=a directory holding Sources/HLSCore to build instead of this tree's (to fuzz an
# older revision, e.g. from `git archive`), FUZZ_EXTRA_SOURCES=Swift files linked into every target
# (compare.sh gives an older HLSCore the one helper the targets call that it lacks), FUZZ_TARGETS,
# FUZZ_SANITIZE.
# HLSCore is compiled straight from Sources/HLSCore with swiftc (the main package exposes
# no library product, and SwiftPM cannot instrument a path dependency's targets on their
# own), instrumented with -sanitize=fuzzer,address so libFuzzer sees parser coverage.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${FUZZ_BUILD:-$here/.build}"   # git-ignored (.build/)
export PATH="/opt/swift/usr/bin:$PATH"
mkdir -p "$out/modules"
sanitize="${FUZZ_SANITIZE:-fuzzer,address}"
opt=(-O -g -sanitize="$sanitize" -parse-as-library)
# ld.gold prints one harmless "Cannot export local symbol '__asan_*'" line per ASan thunk.
quiet() { grep -v "Cannot export local symbol '__asan" >&2 || true; }
core_root="${FUZZ_SOURCES:-$root}/Sources/HLSCore"
mapfile -t core < <(find "$core_root" -name '*.swift' | sort)

# Rebuild HLSCore only when a source is newer than the library.
lib="$out/modules/libHLSCore.a"
if [[ ! -f "$lib" ]] || [[ -n "$(find "$core_root" -name '*.swift' -newer "$lib" | head -1)" ]]; then
  echo "fuzz build: HLSCore (${#core[@]} files, -sanitize=$sanitize)" >&2
  swiftc "${opt[@]}" -module-name HLSCore -emit-module -emit-module-path "$out/modules/HLSCore.swiftmodule" \
    -emit-library -static -o "$lib" "${core[@]}" 2>&1 | quiet
fi
# The playlist targets share the structure-aware mutator, which calls back into libFuzzer
# (Targets/CLibFuzzer declares LLVMFuzzerMutate).
mutator="$here/Targets/PlaylistMutator.swift"
for t in ${FUZZ_TARGETS:-playlist attributelist requestpath}; do
  case $t in
    playlist) srcs=("$here/Targets/PlaylistFuzz.swift" "$mutator") ;;
    attributelist) srcs=("$here/Targets/AttributeListFuzz.swift") ;;
    requestpath) srcs=("$here/Targets/RequestPathFuzz.swift" "$mutator") ;;
    *) echo "fuzz build: unknown target $t" >&2; exit 2 ;;
  esac
  bin="$out/fuzz-$t"
  stale=0
  [[ -x "$bin" && ! "$lib" -nt "$bin" ]] || stale=1
  read -r -a extra <<<"${FUZZ_EXTRA_SOURCES:-}"
  srcs+=("${extra[@]}")
  for src in "${srcs[@]}"; do [[ "$src" -nt "$bin" ]] && stale=1; done
  if [[ $stale -eq 1 ]]; then
    echo "fuzz build: fuzz-$t" >&2
    swiftc "${opt[@]}" -module-name "Fuzz_$t" -I "$out/modules" -I "$here/Targets/CLibFuzzer" -L "$out/modules" -lHLSCore \
      "${srcs[@]}" -o "$bin" 2>&1 | quiet
    [[ -x "$bin" ]] || { echo "fuzz build: fuzz-$t failed" >&2; exit 2; }
  fi
done
echo "$out"
