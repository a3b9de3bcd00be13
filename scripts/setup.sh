#!/usr/bin/env bash
# Installs, on a fresh Debian 12 machine as root, everything the oracle and its tests
# need: the three system browsers, Xvfb for WebKitGTK, fonts, Node.js for the
# Playwright driver, and the driver itself. Idempotent: a second run installs nothing.
# Only what is missing needs root: as any other user, with everything installed (or
# off Debian, with the browsers on PATH: docs/testing.md, "Without root"), it checks
# and goes on.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  chromium            # Blink, driven over the oracle's own CDP client
  firefox-esr         # Gecko, driven over the oracle's own WebDriver BiDi client
  webkit2gtk-driver   # WebKitGTK: WebKitWebDriver + MiniBrowser
  xvfb xauth          # an X display for WebKitGTK when none is set
  fonts-dejavu-core fonts-liberation2  # fixed fonts, so text metrics are reproducible
  ca-certificates
  util-linux          # setpriv: the browsers are started as the unprivileged oracle-browser
  bubblewrap xdg-dbus-proxy  # WebKitGTK's web-process sandbox
  weasyprint          # an independent layout engine: the worked candidate of examples/weasyprint
  chromium-driver     # a real, separate W3C WebDriver server: the tests of triage's --candidate-webdriver
)
command -v node >/dev/null 2>&1 || packages+=(nodejs)

root=false
[[ $(id -u) == 0 ]] && root=true

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
else
  echo "setup: no dpkg (not Debian): installing nothing; the oracle runs /usr/bin/chromium, /usr/bin/firefox-esr and /usr/bin/WebKitWebDriver, or what --chromium-path, --firefox-path, --webkit-driver-path name (docs/testing.md, \"Without root, and off Debian\")" >&2
fi
if ((${#missing[@]})) && ! $root; then
  echo "setup: missing ${missing[*]}: run 'make setup' as root once, or install them yourself" >&2
  exit 1
elif ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages already installed" >&2
fi

# The unprivileged system user the browsers run as when the oracle runs as root
# (docs/sandbox.md): their sandboxes then confine a user with nothing to lose.
# Not needed by an oracle run as any other user (the browsers run as that user), so
# only root creates it, and fixes its home's mode only when it is not 700 already.
if $root; then
  if ! getent passwd oracle-browser >/dev/null; then
    echo "setup: creating system user oracle-browser" >&2
    useradd --system --user-group --home-dir /var/lib/oracle-browser --create-home \
      --shell /usr/sbin/nologin oracle-browser
  fi
  if [[ $(stat -c %a /var/lib/oracle-browser) != 700 ]]; then
    chmod 700 /var/lib/oracle-browser
  fi
fi

# The Playwright driver (playwright-core from the npm registry, at the version go.mod's
# playwright-go pins), run on the machine's node: playwright-go's own Node.js
# download cannot reach its host here.
export PLAYWRIGHT_NODEJS_PATH="${PLAYWRIGHT_NODEJS_PATH:-$(command -v node)}"
go run ./cmd/oracle --install-driver
echo "setup: done" >&2
