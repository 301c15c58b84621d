#!/usr/bin/env bash
# Tools/install/make-deb.sh: the Debian package of hlsplay and hls-origin (`make deb`): installs
# into a staging root with PREFIX=/usr (man pages gzipped, zsh completion in vendor-completions),
# computes Depends from the binaries' shared libraries (dpkg-shlibdeps, else the packages that own
# them by dpkg -S), and builds .build/deb/hlsplay_VERSION_ARCH.deb with dpkg-deb. The version is
# the binary's own (`hlsplay --version`, HLSCore's ProjectVersion). DEB_MAINTAINER overrides the
# Maintainer field (default: git's user.name and user.email). Installs nothing on this machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.build/deb
root=$out/root
rm -rf "$root"
mkdir -p "$root"
${MAKE:-make} --no-print-directory install DESTDIR="$PWD/$root" PREFIX=/usr \
    ZSHCOMPDIR=/usr/share/zsh/vendor-completions MANGZIP=yes >/dev/null
bins=("$root/usr/bin/hlsplay" "$root/usr/bin/hls-origin")
version=$("${bins[0]}" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)

# Depends: dpkg-shlibdeps reads the symbols/shlibs files of the packages that own the libraries
# (versioned dependencies); without it (no dpkg-dev), the owning packages, unversioned.
depends=""
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir "$work/debian"
    printf 'Source: hlsplay\n\nPackage: hlsplay\nArchitecture: any\n' >"$work/debian/control"
    abs=()
    for b in "${bins[@]}"; do abs+=("-e$PWD/$b"); done
    depends=$(cd "$work" && dpkg-shlibdeps -O "${abs[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
fi
if [ -z "$depends" ]; then
    depends=$(for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \//{print $3} /^\t\//{print $1}' | sort -u |
        while read -r lib; do dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib"; done |
        cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')
fi
[ -n "$depends" ] || { echo "make-deb: could not compute Depends" >&2; exit 1; }

maintainer=${DEB_MAINTAINER:-}
if [ -z "$maintainer" ]; then
    name=$(git config user.name 2>/dev/null || true)
    email=$(git config user.email 2>/dev/null || true)
    maintainer="${name:-hlsplay maintainers} <${email:-root@localhost}>"
fi

doc=$root/usr/share/doc/hlsplay
cat >"$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: hlsplay
Comment: hlsplay and hls-origin, built from the hlsplay repository at $(git rev-parse --short HEAD 2>/dev/null || echo "an unknown commit").
 The Swift standard library, Foundation and Dispatch are linked into the binaries
 (swift build --static-swift-stdlib): Apache License 2.0 with Runtime Library
 Exception, see https://swift.org/LICENSE.txt. The sample ladder in
 /usr/share/hlsplay/samples is synthetic (ffmpeg lavfi test sources).

Files: *
Copyright: the hlsplay authors
License: unstated
 The repository states no license for hlsplay itself.
COPYRIGHT
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
printf 'hlsplay (%s) unstable; urgency=low\n\n  * Built from %s.\n\n -- %s  %s\n' \
    "$version" "$(git rev-parse --short HEAD 2>/dev/null || echo source)" "$maintainer" "$date" |
    gzip -9n >"$doc/changelog.Debian.gz"
chmod 644 "$doc/copyright" "$doc/changelog.Debian.gz"

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: hlsplay
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Section: video
Priority: optional
Description: headless reference HLS player and HLS test origin
 hlsplay plays HLS over HTTP with FFmpeg's demuxers and decoders, keeps a real
 forward buffer against a media clock, picks variants, and reports startup,
 stalls, every request and every decision with its inputs: a human summary, a
 JSON summary, a JSON Lines session log and HAR. hls-origin serves a folder of
 HLS media over HTTP with link shaping (rates, traces), fault injection and
 live or Low-Latency HLS made from VOD, for tests of any player.
CONTROL
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
deb=$out/hlsplay_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
