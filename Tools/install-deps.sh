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
packages=(pkg-config openssl ffmpeg libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libcurl4-openssl-dev chromium
          python3-jsonschema python3-numpy python3-scipy python3-sklearn make groff-base
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
