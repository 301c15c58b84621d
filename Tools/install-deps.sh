#!/usr/bin/env bash
# Installs the Debian packages hlsplay needs, only those missing.
set -euo pipefail
# chromium: the timeline report test renders the page headless. python3-jsonschema: the session-log
# schema test (Tools/tests/test_session_log_schema.py) validates real logs against docs/schema.
# python3-numpy, python3-scipy, python3-sklearn: the stall-model trainer and reports (Tools/train) take
# their metrics (AUC, Brier, precision/recall, calibration bins) from scikit-learn and SciPy, and their
# paired tests and bootstrap intervals from SciPy (Tools/train/stats.py), not from hand-written code.
# make, groff-base: `make install` and its test (Tools/tests/test_install.py renders the man pages with groff).
# gstreamer1.0-*, python3-gi, gir1.2-gstreamer-1.0: GStreamer as the peer player of the ABR evaluation
# (Tools/lib/gstreamer_peer.py, docs/abr.md): playbin3 with hlsdemux2 (gstreamer1.0-plugins-good's
# adaptivedemux2), tsdemux and h264parse (-plugins-bad), avdec_h264 and avdec_aac (-libav), driven from
# Debian's python3 through GObject introspection; gstreamer1.0-tools for gst-inspect-1.0.
# python3-yaml: Tools/tests/test_cluster.py reads the Kubernetes Job manifest (Tools/cluster/grid-job.yaml).
# nghttp2-server: nghttpd, the HTTP/2-over-TLS origin of the --cacert test (Tests/HLSPlayerTests/TLSOriginTests).
# zsh: the zsh completion is loaded and asked for completions in a real zsh (Tools/tests/test_install.py).
# python3-pandas: the pandas one-liner of docs/session-log.md (Tools/tests/test_session_log_schema.py).
# python3-venv: the virtual environment below (DuckDB, Dask distributed).
packages=(pkg-config openssl ffmpeg libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libcurl4-openssl-dev chromium
          python3-jsonschema python3-numpy python3-scipy python3-sklearn python3-pandas python3-venv python3-yaml
          make groff-base nghttp2-server zsh
          gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
          gstreamer1.0-libav python3-gi gir1.2-gstreamer-1.0)
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

# ---- PyPI packages, into the virtual environment $HLSPLAY_PYTHON_ENV (default /opt/hlsplay/python) ---------
# DuckDB (the DuckDB one-liner of docs/session-log.md) is on PyPI only, and Debian 12 packages no Dask
# distributed as recent as this (docs/cluster.md). Debian's python3 is externally managed (PEP 668), so they
# go into a virtual environment at a fixed path, made with --system-site-packages so that its python3 also
# sees the Debian modules above (jsonschema, NumPy, SciPy, scikit-learn, pandas, PyYAML, gi, psutil).
# Tools/test.sh runs the Python tests with that interpreter; `grid.py --scheduler` needs it. Every version
# is pinned, Dask's with what it pulls in (the versions one `pip install dask==… distributed==…` resolved).
venv="${HLSPLAY_PYTHON_ENV:-/opt/hlsplay/python}"
pypi_packages=(duckdb==1.1.3
               dask==2026.8.0 distributed==2026.8.0 click==8.5.1 cloudpickle==3.1.3 fsspec==2026.9.0
               importlib_metadata==10.2.0 zipp==4.1.2 lazy_importer==0.1.0 jinja2==3.1.6 markupsafe==3.0.4
               locket==1.0.0 msgpack==1.2.4 partd==1.4.2 sortedcontainers==2.4.0 tblib==3.2.2 toolz==1.2.0
               tornado==6.6.1 zict==3.0.0)
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ! -x "$venv/bin/python3" ]; then
    echo "install-deps: creating $venv" >&2
    $SUDO /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
pinned_present() {
    "$venv/bin/python3" -c 'import sys, importlib.metadata as m
want = dict(a.split("==") for a in sys.argv[1:])
sys.exit(any(m.version(k) != v for k, v in want.items()))' "${pypi_packages[@]}" 2>/dev/null
}
if pinned_present; then
    echo "install-deps: ${#pypi_packages[@]} PyPI packages present in $venv" >&2
else
    echo "installing into $venv: ${pypi_packages[*]}" >&2
    $SUDO "$venv/bin/pip" install -q --disable-pip-version-check "${pypi_packages[@]}"
    pinned_present || { echo "install-deps: the PyPI packages did not install into $venv" >&2; exit 1; }
    "$venv/bin/python3" -c "import duckdb, dask.distributed, jsonschema" || { echo "install-deps: $venv cannot import them" >&2; exit 1; }
fi
# ---- end of PyPI packages ------------------------------------------------------------------------------------
