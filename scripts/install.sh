#!/usr/bin/env bash
# Installs mpprov as a systemd service on the technician's laptop:
#
#   sudo scripts/install.sh [--prefix /usr/local] [--dest-dir DIR] [--no-build] [--no-start]
#
#   PREFIX/lib/mpprov/            the build (dist/), package.json and the production node_modules
#   PREFIX/bin/mpprov             the command
#   /etc/systemd/system/mpprov.service   systemd/mpprov.service, with this node and PREFIX filled in
#   /etc/systemd/user/mpprov-notify.service   the desktop notification (user unit), filled in the same way
#   /etc/mpprov/agent.yaml        systemd/agent.yaml, unless one is there already (mode 0600)
#
# --dest-dir stages everything under DIR (packaging, tests) and neither reloads nor starts systemd.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
dest=
build=yes
start=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
    --dest-dir) dest=${2:?--dest-dir needs a folder}; shift 2 ;;
    --no-build) build=no; shift ;;
    --no-start) start=no; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done

node=$(command -v node) || { echo "install.sh: node is not installed (Node.js 20.19 or newer)" >&2; exit 1; }
if [ "$build" = yes ]; then
  npm run build
fi
[ -f dist/cli/main.js ] || { echo "install.sh: dist/cli/main.js is missing: run npm run build" >&2; exit 1; }

lib="$dest$prefix/lib/mpprov"
echo "install.sh: $lib"
rm -rf "$lib"
install -d -m 0755 "$lib" "$dest$prefix/bin" "$dest/etc/systemd/system" "$dest/etc/systemd/user"
cp -a package.json README.md dist "$lib/"
# Production dependencies only, as npm resolved them here: no registry needed at install time.
npm ls --omit=dev --all --parseable 2>/dev/null | while read -r path; do
  rel=${path#"$PWD"/}
  [ "$rel" != "$path" ] && [ -d "$rel" ] && cp -a --parents "$rel" "$lib/"
done
chmod 0755 "$lib/dist/cli/main.js"
ln -sfn "$prefix/lib/mpprov/dist/cli/main.js" "$dest$prefix/bin/mpprov"

unit="$dest/etc/systemd/system/mpprov.service"
sed -e "s|/usr/bin/node |$node |" -e "s|/usr/local/lib/mpprov|$prefix/lib/mpprov|g" systemd/mpprov.service > "$unit"
chmod 0644 "$unit"
echo "install.sh: $unit"
# The desktop user's companion: the same node and prefix, so `mpprov notify` is the installed build.
user_unit="$dest/etc/systemd/user/mpprov-notify.service"
sed -e "s|/usr/bin/node |$node |" -e "s|/usr/local/lib/mpprov|$prefix/lib/mpprov|g" systemd/mpprov-notify.service > "$user_unit"
chmod 0644 "$user_unit"
echo "install.sh: $user_unit"

install -d -m 0755 "$dest/etc/mpprov"
if [ -e "$dest/etc/mpprov/agent.yaml" ]; then
  echo "install.sh: $dest/etc/mpprov/agent.yaml exists: kept"
else
  install -m 0600 systemd/agent.yaml "$dest/etc/mpprov/agent.yaml"
  echo "install.sh: $dest/etc/mpprov/agent.yaml (sample)"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
  systemd-analyze verify "$unit"
  # Verified in system mode: a user manager is not at hand under sudo, and the unit uses nothing user-only.
  systemd-analyze verify "$user_unit"
fi
if [ -z "$dest" ] && [ "$start" = yes ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable --now mpprov.service
  echo "install.sh: mpprov.service enabled and started; follow it with: journalctl -u mpprov -f"
else
  echo "install.sh: not started (start with: systemctl daemon-reload && systemctl enable --now mpprov)"
fi
echo "install.sh: desktop notifications: each desktop user runs systemctl --user enable --now mpprov-notify (needs libnotify-bin)"
