#!/usr/bin/env bash
# Installs mpprov as a systemd service on the technician's laptop:
#
#   sudo scripts/install.sh [--prefix /usr/local] [--node PATH] [--dest-dir DIR] [--no-build] [--no-start]
#
#   PREFIX/lib/mpprov/mpprov.cjs  the launcher (npm run package's dist/mpprov.cjs) and beside it
#   PREFIX/lib/mpprov/mpprov-app.cjs  the bundle it runs (dist/mpprov-app.cjs): no node_modules
#   PREFIX/bin/mpprov             the command
#   /etc/systemd/system/mpprov.service   systemd/mpprov.service, with this node and PREFIX filled in
#   /etc/systemd/user/mpprov-notify.service   the desktop notification (user unit), filled in the same way
#   /etc/systemd/system/mpprov-observe.service   the events receiver, filled in the same way, not enabled
#   /etc/mpprov/agent.yaml        systemd/agent.yaml, unless one is there already (mode 0600)
#
# --dest-dir stages everything under DIR (packaging, tests) and neither reloads nor starts systemd.
# --node names the Node.js the units run (default: `command -v node`); one under /home or /root is
# refused, because the unit's ProtectHome=yes hides it from the service.
# On Debian, the .deb (npm run package) is the better way: it is what apt can upgrade and remove.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
node=
dest=
build=yes
start=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
    --dest-dir) dest=${2:?--dest-dir needs a folder}; shift 2 ;;
    --node) node=${2:?--node needs the path of a node executable}; shift 2 ;;
    --no-build) build=no; shift ;;
    --no-start) start=no; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done

if [ -z "$node" ]; then
  node=$(command -v node) || { echo "install.sh: node is not installed (Node.js 20.19 or newer; on Debian: apt install nodejs)" >&2; exit 1; }
fi
resolved=$(readlink -f -- "$node" 2>/dev/null || true)
[ -n "$resolved" ] && [ -f "$resolved" ] && [ -x "$resolved" ] || { echo "install.sh: $node is not an executable" >&2; exit 1; }
node=$resolved
case "$node" in
  /home/*|/root/*|/run/user/*)
    echo "install.sh: $node is under /home, /root or /run/user, which mpprov.service cannot see (ProtectHome=yes); install Debian's nodejs or pass --node /usr/bin/node" >&2
    exit 1 ;;
esac
"$node" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' ||
  { echo "install.sh: $node is Node.js $("$node" --version), mpprov needs 20.19 or newer" >&2; exit 1; }
if [ "$build" = yes ]; then
  npm run build
  node packaging/build-package.mjs --bundle-only
fi
for built in dist/mpprov.cjs dist/mpprov-app.cjs dist/mpprov-apply.cjs; do
  [ -f "$built" ] || { echo "install.sh: $built is missing: run npm run package" >&2; exit 1; }
done

lib="$dest$prefix/lib/mpprov"
echo "install.sh: $lib"
rm -rf "$lib"
install -d -m 0755 "$lib" "$dest$prefix/bin" "$dest/etc/systemd/system" "$dest/etc/systemd/user"
# The bundles carry their dependencies and the version (mpprov-apply.cjs: plan and apply alone);
# the launcher beside them runs one with V8's code cache (src/cli/compile-cache.ts). The
# launcher's first line names this node.
{ echo "#!$node"; tail -n +2 dist/mpprov.cjs; } > "$lib/mpprov.cjs"
chmod 0755 "$lib/mpprov.cjs"
install -m 0644 dist/mpprov-app.cjs "$lib/mpprov-app.cjs"
install -m 0644 dist/mpprov-apply.cjs "$lib/mpprov-apply.cjs"
install -m 0644 README.md "$lib/README.md"
ln -sfn "$prefix/lib/mpprov/mpprov.cjs" "$dest$prefix/bin/mpprov"

unit="$dest/etc/systemd/system/mpprov.service"
sed -e "s|/usr/bin/node |$node |" -e "s|/usr/local/lib/mpprov/dist/cli/main.js|$prefix/lib/mpprov/mpprov.cjs|g" -e "s|/usr/local/lib/mpprov/README.md|$prefix/lib/mpprov/README.md|g" systemd/mpprov.service > "$unit"
chmod 0644 "$unit"
echo "install.sh: $unit"
# The desktop user's companion: the same node and prefix, so `mpprov notify` is the installed build.
user_unit="$dest/etc/systemd/user/mpprov-notify.service"
sed -e "s|/usr/bin/node |$node |" -e "s|/usr/local/lib/mpprov/dist/cli/main.js|$prefix/lib/mpprov/mpprov.cjs|g" -e "s|/usr/local/lib/mpprov/README.md|$prefix/lib/mpprov/README.md|g" systemd/mpprov-notify.service > "$user_unit"
chmod 0644 "$user_unit"
echo "install.sh: $user_unit"
# The events receiver: installed, never enabled here (it needs service.events and a reachable host).
observe_unit="$dest/etc/systemd/system/mpprov-observe.service"
sed -e "s|/usr/bin/node |$node |" -e "s|/usr/local/lib/mpprov/dist/cli/main.js|$prefix/lib/mpprov/mpprov.cjs|g" -e "s|/usr/local/lib/mpprov/README.md|$prefix/lib/mpprov/README.md|g" systemd/mpprov-observe.service > "$observe_unit"
chmod 0644 "$observe_unit"
echo "install.sh: $observe_unit"

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
  systemd-analyze verify "$observe_unit"
fi
if [ -z "$dest" ] && [ "$start" = yes ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable --now mpprov.service
  echo "install.sh: mpprov.service enabled and started; follow it with: journalctl -u mpprov -f"
else
  echo "install.sh: not started (start with: systemctl daemon-reload && systemctl enable --now mpprov)"
fi
echo "install.sh: desktop notifications: each desktop user runs systemctl --user enable --now mpprov-notify (needs libnotify-bin)"
