#!/usr/bin/env bash
# Debian's headless Chromium and ChromeDriver, for the browser test of the
# built book (scripts/browse_book.py). Installs them only when missing;
# needs root or sudo, like any Debian package.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "browser_packages: chromium and chromedriver are missing and this" \
         "user cannot install Debian packages: run" \
         "'apt-get install chromium chromium-driver' as root." >&2
    exit 1
  }
  SUDO=sudo
fi
echo "browser_packages: installing Debian's chromium and chromium-driver" >&2
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq chromium chromium-driver >&2
