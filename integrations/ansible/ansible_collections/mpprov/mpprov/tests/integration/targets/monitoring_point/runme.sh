#!/usr/bin/env bash
# The target against a simulated fleet: MPPROV_TEST_MANIFEST is `mpprov simulate --devices 2
# --manifest FILE`'s manifest, MPPROV_EXECUTABLE the mpprov to run (default: mpprov on PATH),
# MPPROV_TEST_DIR a folder for state (default: a new temporary one).
set -euo pipefail
cd "$(dirname "$0")"
: "${MPPROV_TEST_MANIFEST:?MPPROV_TEST_MANIFEST names the simulator fleet manifest (mpprov simulate --devices 2 --manifest FILE)}"
dir=${MPPROV_TEST_DIR:-$(mktemp -d)}
export ANSIBLE_ROLES_PATH="$(cd .. && pwd)"
exec ansible-playbook -i localhost, -c local runme.yml \
  -e "mpprov_test_manifest=$MPPROV_TEST_MANIFEST" -e "mpprov_test_dir=$dir" \
  -e "mpprov_executable=${MPPROV_EXECUTABLE:-mpprov}" -e ansible_python_interpreter=/usr/bin/python3 "$@"
