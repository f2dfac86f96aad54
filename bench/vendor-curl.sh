#!/usr/bin/env bash
# The vendor's documented way to configure a Monitoring Point, as an administrator scripts it with
# curl (service-api.md area C): upload the files with an empty Expect header, POST each stanza,
# restart networking, then poll once a second until the interface is active. bench/apply-sweep.mjs
# runs it beside `mpprov apply` on the same simulated device, as the yardstick for the overhead.
#
#   bench/vendor-curl.sh --url https://HOST:PORT --user admin --password-file FILE --cacert FILE \
#       [--upload SLOT=FILE]... [--stanza FILE.json]... --wait-for INTERFACE [--max-polls N]
#
# The password goes to curl through a private config file, never on its command line (where `ps`
# would show it). Exit status 0 once the interface is active, 1 on any failed call or no answer.
set -euo pipefail

url= user=admin password_file= cacert= wait_for= max_polls=120
uploads=() stanzas=()
while [ $# -gt 0 ]; do
  case "$1" in
    --url) url=$2; shift 2 ;;
    --user) user=$2; shift 2 ;;
    --password-file) password_file=$2; shift 2 ;;
    --cacert) cacert=$2; shift 2 ;;
    --upload) uploads+=("$2"); shift 2 ;;
    --stanza) stanzas+=("$2"); shift 2 ;;
    --wait-for) wait_for=$2; shift 2 ;;
    --max-polls) max_polls=$2; shift 2 ;;
    *) echo "vendor-curl.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done
[ -n "$url" ] && [ -n "$password_file" ] && [ -n "$cacert" ] && [ -n "$wait_for" ] ||
  { echo "vendor-curl.sh: --url, --password-file, --cacert and --wait-for are required" >&2; exit 64; }

config=$(umask 077 && mktemp)
trap 'rm -f "$config"' EXIT
password=$(cat -- "$password_file")
# curl's config syntax: a quoted value with backslashes and quotes escaped.
quoted=$(printf '%s:%s' "$user" "$password" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')
printf 'user = "%s"\ncacert = "%s"\nsilent\nshow-error\nfail\noutput = /dev/null\n' "$quoted" "$cacert" > "$config"
api="$url/api/v1"

for upload in "${uploads[@]}"; do
  curl -K "$config" -H "Expect:" -F "${upload%%=*}=@${upload#*=}" "$api/interface/file/"
done
for stanza in "${stanzas[@]}"; do
  curl -K "$config" -X POST -H "Content-Type: application/json" --data "@$stanza" "$api/interface/"
done
curl -K "$config" -X PUT -H "Content-Type: application/json" -d '{}' "$api/service/networking/?action=restart"

for ((poll = 1; poll <= max_polls; poll++)); do
  sleep 1
  if curl -K "$config" "$api/interface/$wait_for/?config_state=active" 2>/dev/null; then exit 0; fi
done
echo "vendor-curl.sh: $wait_for is not active after $max_polls polls" >&2
exit 1
