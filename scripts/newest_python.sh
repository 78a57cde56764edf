#!/usr/bin/env bash
# Print the path of a Python 3.13 interpreter, building it first if needed.
#
# `make test-newest` runs the suite on the newest JAX, which needs Python
# 3.12 or newer; Debian 12 (this project's CI machine) ships only 3.11.
# We build upstream CPython from the source package of the next Debian
# release (trixie), fetched with `apt-get source --download-only` from a
# deb-src entry of its own. No binary package of trixie is installed: the
# build uses bookworm's compiler and -dev headers.
#
# The interpreter lands in a cache folder outside the clone
# ($BOOK_PYTHON_CACHE, default ~/.cache/jax-gpu-book), so later runs skip
# the build (about 8 minutes on 2 cores). Progress goes to stderr; stdout
# is only the interpreter's path, so callers can write
#   PY=$(scripts/newest_python.sh)
set -euo pipefail

SERIES=3.13
CACHE=${BOOK_PYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jax-gpu-book}
PREFIX=$CACHE/python$SERIES
PYTHON=$PREFIX/bin/python$SERIES

say() { echo "newest_python: $*" >&2; }

if "$PYTHON" -c 'import ssl, sqlite3, lzma, bz2, ctypes, zlib' 2>/dev/null
then
  echo "$PYTHON"
  exit 0
fi

# Only apt's source index of trixie is read; bookworm's lists are untouched.
SOURCES=/etc/apt/sources.list.d/jax-gpu-book-trixie-src.sources
APT_ONLY_TRIXIE=(-o "Dir::Etc::sourcelist=$SOURCES" -o "Dir::Etc::sourceparts=-"
                 -o "APT::Get::List-Cleanup=0")
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

if [ ! -f "$SOURCES" ]; then
  say "adding a deb-src entry for Debian trixie ($SOURCES)"
  $SUDO tee "$SOURCES" >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi

# The headers CPython's optional modules need, from this release (bookworm).
HEADERS=(build-essential libssl-dev zlib1g-dev libbz2-dev liblzma-dev
         libsqlite3-dev libffi-dev libreadline-dev libncurses-dev
         libgdbm-dev uuid-dev libexpat1-dev)
missing=()
for pkg in "${HEADERS[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing build headers: ${missing[*]}"
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
say "downloading the python$SERIES source package of Debian trixie"
$SUDO apt-get "${APT_ONLY_TRIXIE[@]}" update -qq >&2
apt-get "${APT_ONLY_TRIXIE[@]}" source --download-only "python$SERIES" >&2
tar -xf python"$SERIES"_*.orig.tar.xz
cd Python-"$SERIES".*/

say "building CPython $(basename "$PWD") into $PREFIX (about 8 minutes)"
./configure --prefix="$PREFIX" --with-ensurepip=install >build.log 2>&1 \
  || { tail -40 build.log >&2; exit 1; }
make -j"$(nproc)" >>build.log 2>&1 || { tail -40 build.log >&2; exit 1; }
make install >>build.log 2>&1 || { tail -40 build.log >&2; exit 1; }

"$PYTHON" -c 'import ssl, sqlite3, lzma, bz2, ctypes, zlib' >&2 \
  || { say "the built Python lacks a standard module"; exit 1; }
say "built $("$PYTHON" -V)"
echo "$PYTHON"
