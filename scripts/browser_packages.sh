#!/usr/bin/env bash
# Chromium and ChromeDriver for the browser test of the built book
# (scripts/browse_book.py), from the system's packages: apt on Debian and
# Ubuntu, dnf on Fedora. Installs them only when missing, and only when
# asked (`make browser`; CI runs it before the suite). Needs root or sudo,
# like any system package; elsewhere, scripts/chromium.py says what to do.
set -euo pipefail
cd "$(dirname "$0")/.."
if python3 -c "from scripts import chromium; chromium.find()" 2>/dev/null
then
  exit 0
fi
if command -v apt-get >/dev/null; then
  UPDATE="apt-get update -qq"
  INSTALL="apt-get install -y -qq chromium chromium-driver"
elif command -v dnf >/dev/null; then
  UPDATE=true
  INSTALL="dnf install -y -q chromium chromedriver"
else
  echo "browser_packages: no apt-get or dnf on this machine; to install" \
       "them: $(python3 -c 'from scripts import chromium
print(chromium.install_hint())')" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "browser_packages: Chromium and ChromeDriver are missing and this" \
         "user cannot install system packages: run '$INSTALL' as root." >&2
    exit 1
  }
  SUDO=sudo
fi
echo "browser_packages: installing Chromium and ChromeDriver: $INSTALL" >&2
$SUDO $UPDATE >&2
$SUDO $INSTALL >&2
