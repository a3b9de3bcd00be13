#!/usr/bin/env bash
# Installs, on a fresh Debian 12 machine as root, everything the oracle and its tests
# need: the three system browsers, Xvfb for WebKitGTK, fonts, Node.js for the
# Playwright driver, and the driver itself. Idempotent: a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  chromium            # Blink, driven by playwright-go
  firefox-esr         # Gecko, driven by playwright-go over WebDriver BiDi
  webkit2gtk-driver   # WebKitGTK: WebKitWebDriver + MiniBrowser
  xvfb xauth          # an X display for WebKitGTK when none is set
  fonts-dejavu-core fonts-liberation2  # fixed fonts, so text metrics are reproducible
  ca-certificates
  util-linux          # setpriv: the browsers are started as the unprivileged oracle-browser
  bubblewrap xdg-dbus-proxy  # WebKitGTK's web-process sandbox
  weasyprint          # an independent layout engine: the worked candidate of examples/weasyprint
)
command -v node >/dev/null 2>&1 || packages+=(nodejs)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages already installed" >&2
fi

# The unprivileged system user the browsers run as when the oracle runs as root
# (docs/sandbox.md): their sandboxes then confine a user with nothing to lose.
if ! getent passwd oracle-browser >/dev/null; then
  echo "setup: creating system user oracle-browser" >&2
  useradd --system --user-group --home-dir /var/lib/oracle-browser --create-home \
    --shell /usr/sbin/nologin oracle-browser
fi
chmod 700 /var/lib/oracle-browser

# The Playwright driver (playwright-core from the npm registry, at the version go.mod's
# playwright-go pins), run on the machine's node: playwright-go's own Node.js
# download cannot reach its host here.
export PLAYWRIGHT_NODEJS_PATH="${PLAYWRIGHT_NODEJS_PATH:-$(command -v node)}"
go run ./cmd/oracle --install-driver
echo "setup: done" >&2
