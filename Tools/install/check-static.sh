#!/usr/bin/env bash
# Tools/install/check-static.sh BINARY...: fails unless each binary runs without the Swift
# toolchain: no Swift runtime library (libswiftCore, Foundation, Dispatch, BlocksRuntime) among
# its shared libraries and none of them missing. `make` runs it before installing anything.
set -euo pipefail
status=0
for bin in "$@"; do
    if [ ! -x "$bin" ]; then
        echo "check-static: $bin is missing: run make" >&2
        status=1
        continue
    fi
    libs=$(ldd "$bin")
    swift_libs=$(grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|lib_Foundation|lib_FoundationICU|/opt/swift' <<<"$libs" || true)
    missing=$(grep 'not found' <<<"$libs" || true)
    if [ -n "$swift_libs" ]; then
        echo "check-static: $bin loads the Swift runtime from the toolchain (built without --static-swift-stdlib?):" >&2
        echo "$swift_libs" >&2
        echo "check-static: run make (swift build -c release --static-swift-stdlib)" >&2
        status=1
    fi
    if [ -n "$missing" ]; then
        echo "check-static: $bin needs libraries this machine lacks:" >&2
        echo "$missing" >&2
        status=1
    fi
done
exit $status
