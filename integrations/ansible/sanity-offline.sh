#!/usr/bin/env bash
# Runs ansible-test's sanity tests that work offline, on Debian's ansible-core and Python packages,
# against a copy of the collection under a path ending in ansible_collections/mpprov/mpprov (where
# ansible-test needs it).
#   integrations/ansible/sanity-offline.sh [TEST...]     default: validate-modules pep8 yamllint compile import
# ansible-test puts each test in a virtualenv that it fills from PyPI; offline, each is made here
# from /usr/bin/python3 with the system's site packages (python3-voluptuous, yamllint, pylint, ...)
# at the path ansible-test names, and marked as made, so ansible-test uses it as it is.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(validate-modules pep8 yamllint compile import)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ansible_collections/mpprov"
cp -r "$here/ansible_collections/mpprov/mpprov" "$work/ansible_collections/mpprov/mpprov"
find "$work" -name __pycache__ -prune -exec rm -rf {} +
cd "$work/ansible_collections/mpprov/mpprov"
# ansible-test lists a collection's files with git when it can: a repository of exactly these files.
git init -q . && git add -A && git -c user.name=ci -c user.email=ci@localhost commit -qm sanity
export HOME="$work/home" ANSIBLE_HOME="$work/home/.ansible"
python=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
status=0
for test in "${tests[@]}"; do
  for _ in 1 2 3 4; do
    if out=$(ansible-test sanity --test "$test" --python "$python" --color no 2>&1); then
      echo "sanity $test: ok"
      continue 2
    fi
    venv=$(printf '%s\n' "$out" | sed -n 's/^FATAL: Python .* at "\(.*\)\/bin\/python" does not have pip available\./\1/p' | head -1)
    [ -n "$venv" ] || break
    /usr/bin/python3 -m venv --system-site-packages --without-pip "$venv"
    touch "$venv/marker.txt"
    echo null > "$venv/meta.yaml.json"
  done
  printf '%s\n' "$out"
  echo "sanity $test: FAILED"
  status=1
done
exit $status
