# Builds and installs hlsplay and hls-origin (docs/install.md).
#
#   make                      release binaries with the Swift standard library linked in, man pages, completions
#   make install              into PREFIX (default /usr/local); DESTDIR=/stage is put before every path
#   make uninstall            removes what install put there (same PREFIX and DESTDIR)
#   make deb                  .build/deb/hlsplay_VERSION_ARCH.deb (PREFIX /usr), built by dpkg-deb
#
# `make install` needs no Swift toolchain once `make` has built (so `make && sudo make install`
# works where root has no swift on its PATH); it refuses binaries that load the Swift runtime from
# the toolchain (a build without --static-swift-stdlib).

PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share/hlsplay
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/hlsplay
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
# The sample ladder hlsplay plays when given no URL: installed when Samples/make-all.sh has built
# it (about 42 MB). SAMPLES=no installs without it.
SAMPLES     ?= yes
# gzip the man pages (the .deb does, as Debian policy asks).
MANGZIP     ?= no
# Run on the installed binaries: drops the DWARF debug info (85 MB -> 77 MB for hlsplay) and keeps
# the symbol table, so a crash's backtrace still names its functions. STRIP= installs them as built.
STRIP       ?= strip --strip-debug

SWIFT       ?= swift
PYTHON      ?= python3
INSTALL     ?= install
# The one release build every consumer shares: Tools/test.sh and Tools/play-default.sh build with
# the same flags, so the binaries they test are the ones installed and no build undoes another.
SWIFT_RELEASE_FLAGS = -c release --static-swift-stdlib
BIN         := .build/release
GEN         := .build/install-gen
MODELS      := models/stall-logistic-v2.json models/stall-logistic-v1.json
LADDER      := Samples/build/ladder-2s
# The man pages' date: the last commit's (reproducible), else today.
DOCDATE     = $(shell git log -1 --format=%cs 2>/dev/null || date +%F)

.PHONY: all build docs install uninstall deb clean-install-gen

all: build docs

# Runs swift build when a toolchain is there (a no-op when nothing changed); without one, or as
# root in a checkout another user built (sudo make install: a root-owned file in .build would break
# that user's next build), the binaries already built are used as they are.
build:
	@if [ "$$(id -u)" = 0 ] && [ -d .build ] && [ "$$(stat -c %u .build)" != 0 ]; then \
	    echo "make: root in a checkout built by another user: installing the binaries in $(BIN) as built"; \
	elif command -v $(SWIFT) >/dev/null 2>&1; then \
	    $(SWIFT) build $(SWIFT_RELEASE_FLAGS) --product hlsplay && \
	    $(SWIFT) build $(SWIFT_RELEASE_FLAGS) --product hls-origin; \
	elif [ -x $(BIN)/hlsplay ] && [ -x $(BIN)/hls-origin ]; then \
	    echo "make: $(SWIFT) is not on PATH: using the binaries already in $(BIN)"; \
	else \
	    echo "make: $(SWIFT) is not on PATH and $(BIN) has no binaries: run make as the user who builds first" >&2; exit 1; \
	fi
	@Tools/install/check-static.sh $(BIN)/hlsplay $(BIN)/hls-origin

# Regenerated when the binaries or the generator are newer than the last run (so sudo make
# install after make writes nothing into .build).
docs: build
	@if [ ! -f $(GEN)/.stamp ] || [ $(BIN)/hlsplay -nt $(GEN)/.stamp ] || [ $(BIN)/hls-origin -nt $(GEN)/.stamp ] \
	    || [ Tools/install/gen-docs.py -nt $(GEN)/.stamp ]; then \
	    echo "$(PYTHON) -B Tools/install/gen-docs.py --hlsplay $(BIN)/hlsplay --hls-origin $(BIN)/hls-origin --out $(GEN)"; \
	    $(PYTHON) -B Tools/install/gen-docs.py --hlsplay $(BIN)/hlsplay --hls-origin $(BIN)/hls-origin \
	        --out $(GEN) --date $(DOCDATE) && touch $(GEN)/.stamp; \
	fi

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/models $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(INSTALL) -m 755 $(BIN)/hlsplay $(BIN)/hls-origin $(DESTDIR)$(BINDIR)/
	@if [ -n "$(STRIP)" ]; then $(STRIP) $(DESTDIR)$(BINDIR)/hlsplay $(DESTDIR)$(BINDIR)/hls-origin; fi
	$(INSTALL) -m 644 $(MODELS) $(DESTDIR)$(DATADIR)/models/
	$(INSTALL) -m 644 $(GEN)/man1/hlsplay.1 $(GEN)/man1/hls-origin.1 $(DESTDIR)$(MANDIR)/man1/
	@if [ "$(MANGZIP)" = yes ]; then gzip -9nf $(DESTDIR)$(MANDIR)/man1/hlsplay.1 $(DESTDIR)$(MANDIR)/man1/hls-origin.1; fi
	$(INSTALL) -m 644 $(GEN)/bash/hlsplay $(GEN)/bash/hls-origin $(DESTDIR)$(BASHCOMPDIR)/
	$(INSTALL) -m 644 $(GEN)/zsh/_hlsplay $(GEN)/zsh/_hls-origin $(DESTDIR)$(ZSHCOMPDIR)/
	$(INSTALL) -m 644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	@if [ "$(SAMPLES)" = yes ] && [ -f $(LADDER)/master.m3u8 ]; then \
	    echo "installing the sample ladder $(LADDER) into $(DESTDIR)$(DATADIR)/samples/ladder-2s"; \
	    rm -rf $(DESTDIR)$(DATADIR)/samples/ladder-2s; \
	    $(INSTALL) -d $(DESTDIR)$(DATADIR)/samples; \
	    cp -RL $(LADDER) $(DESTDIR)$(DATADIR)/samples/ladder-2s; \
	    rm -f $(DESTDIR)$(DATADIR)/samples/ladder-2s/.stamp; \
	    chmod -R u=rwX,go=rX $(DESTDIR)$(DATADIR)/samples; \
	elif [ "$(SAMPLES)" = yes ]; then \
	    echo "make: $(LADDER) is not built (Samples/make-all.sh): hlsplay will need a URL"; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hlsplay $(DESTDIR)$(BINDIR)/hls-origin
	rm -f $(DESTDIR)$(MANDIR)/man1/hlsplay.1 $(DESTDIR)$(MANDIR)/man1/hls-origin.1
	rm -f $(DESTDIR)$(MANDIR)/man1/hlsplay.1.gz $(DESTDIR)$(MANDIR)/man1/hls-origin.1.gz
	rm -f $(DESTDIR)$(BASHCOMPDIR)/hlsplay $(DESTDIR)$(BASHCOMPDIR)/hls-origin
	rm -f $(DESTDIR)$(ZSHCOMPDIR)/_hlsplay $(DESTDIR)$(ZSHCOMPDIR)/_hls-origin
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)

deb: all
	Tools/install/make-deb.sh

clean-install-gen:
	rm -rf $(GEN) .build/deb
