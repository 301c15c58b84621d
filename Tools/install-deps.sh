#!/usr/bin/env bash
# Installs the Debian packages hlsplay needs, only those missing.
set -euo pipefail
# chromium: the timeline report test renders the page headless. python3-jsonschema: the session-log
# schema test (Tools/tests/test_session_log_schema.py) validates real logs against docs/schema.
# python3-numpy, python3-scipy, python3-sklearn: the stall-model trainer and reports (Tools/train) take
# their metrics (AUC, Brier, precision/recall, calibration bins) from scikit-learn and SciPy, and their
# paired tests and bootstrap intervals from SciPy (Tools/train/stats.py), not from hand-written code.
# make, groff-base: `make install` and its test (Tools/tests/test_install.py renders the man pages with groff).
# nghttp2-server: nghttpd, the HTTP/2-over-TLS origin of the --cacert test (Tests/HLSPlayerTests/TLSOriginTests).
# zsh: the zsh completion is loaded and asked for completions in a real zsh (Tools/tests/test_install.py).
# python3-pandas: the pandas one-liner of docs/session-log.md (Tools/tests/test_session_log_schema.py);
# python3-venv: the environment below, for the DuckDB one.
packages=(pkg-config openssl ffmpeg libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libcurl4-openssl-dev chromium
          python3-jsonschema python3-numpy python3-scipy python3-sklearn python3-pandas python3-venv make groff-base
          nghttp2-server zsh)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    echo "install-deps: all ${#packages[@]} packages present" >&2
else
    echo "installing: ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    for p in "${missing[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || { echo "install-deps: $p did not install" >&2; exit 1; }
    done
fi

# DuckDB is on PyPI only. Debian's python3 is externally managed (PEP 668), so it goes into a virtual
# environment of its own at a fixed path, made with --system-site-packages so that its python3 also
# sees the Debian modules above (jsonschema, numpy, SciPy, scikit-learn, pandas). Tools/test.sh runs
# the Python tests with that interpreter. The version is pinned: the DuckDB one-liner of
# docs/session-log.md is tested against it.
HLSPLAY_PYTHON_ENV="${HLSPLAY_PYTHON_ENV:-/opt/hlsplay/python}"
duckdb_version=1.1.3
if "$HLSPLAY_PYTHON_ENV/bin/python3" -c "import duckdb, sys; sys.exit(duckdb.__version__ != '$duckdb_version')" 2>/dev/null; then
    echo "install-deps: duckdb $duckdb_version present in $HLSPLAY_PYTHON_ENV" >&2
else
    echo "installing: duckdb $duckdb_version into $HLSPLAY_PYTHON_ENV (PyPI)" >&2
    /usr/bin/python3 -m venv --system-site-packages "$HLSPLAY_PYTHON_ENV"
    "$HLSPLAY_PYTHON_ENV/bin/python3" -m pip install --quiet --disable-pip-version-check "duckdb==$duckdb_version"
    "$HLSPLAY_PYTHON_ENV/bin/python3" -c "import duckdb, jsonschema" || { echo "install-deps: duckdb did not install" >&2; exit 1; }
fi
