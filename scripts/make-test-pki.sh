#!/usr/bin/env bash
# (Re)generates a THROWAWAY test PKI for mpprov's profiles, tests and the device simulator.
# Every key written here is public, worthless and must never protect anything real.
#
#   scripts/make-test-pki.sh [out-dir]     (default: profiles/certs)
#
# Validity is 20 years so that committed profiles keep validating; rerunning the script replaces
# every file (new keys, new serials), so profiles that pin fingerprints must be updated with it.
set -euo pipefail

# The default is the repository's profiles/certs, wherever the script is started from.
out=${1:-$(cd "$(dirname "$0")/.." && pwd)/profiles/certs}
days=7300
pfx_password=test-pfx-password
key_password=test-key-password

command -v openssl >/dev/null || { echo "make-test-pki: openssl is not installed" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Extension sections for every certificate kind; `openssl x509 -req -extfile` picks one by name.
cat >"$work/ext.cnf" <<'EOF'
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always

[radius_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:radius.test.invalid
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[client_ec]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[device_https]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF

rsa_key() { openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1"; }
ec_key() { openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }

# `openssl req` reads extensions from its config, not from -extfile: give it a complete one so that
# the machine's /etc/ssl/openssl.cnf plays no part.
{ printf '[req]\ndistinguished_name = dn\n[dn]\n'; cat "$work/ext.cnf"; } >"$work/req.cnf"

# self_signed_ca NAME "Common Name"
self_signed_ca() {
  rsa_key "$out/$1.key"
  openssl req -new -x509 -key "$out/$1.key" -subj "/O=mpprov TEST ONLY/CN=$2" -days "$days" \
    -sha256 -config "$work/req.cnf" -extensions ca -out "$out/$1.pem"
}

# issue KEY_FILE CERT_FILE "Common Name" CA_NAME EXTENSION_SECTION
issue() {
  openssl req -new -key "$1" -subj "/O=mpprov TEST ONLY/CN=$3" -config "$work/req.cnf" -out "$work/req.csr"
  openssl x509 -req -in "$work/req.csr" -CA "$out/$4.pem" -CAkey "$out/$4.key" -CAcreateserial \
    -CAserial "$work/$4.srl" -days "$days" -sha256 -extfile "$work/ext.cnf" -extensions "$5" \
    -out "$2" 2>/dev/null
}

self_signed_ca radius-ca "mpprov TEST radius CA"
self_signed_ca client-ca "mpprov TEST client CA"
self_signed_ca device-ca "mpprov TEST device CA"

# RADIUS server side (used by the simulator to play the authenticator's server).
rsa_key "$out/radius-server.key"
issue "$out/radius-server.key" "$out/radius-server.pem" "radius.test.invalid" radius-ca radius_server

# mp01, RSA, in every encoding a technician may bring on a stick.
rsa_key "$out/mp01-key.pem" # PKCS#8 PEM: genpkey's default
issue "$out/mp01-key.pem" "$out/mp01-cert.pem" "mp01.test.invalid" client-ca client
openssl x509 -in "$out/mp01-cert.pem" -outform DER -out "$out/mp01-cert.der"
# `openssl pkey -outform DER` writes PKCS#1 for RSA; -topk8 gives the PKCS#8 the README promises.
openssl pkcs8 -topk8 -nocrypt -in "$out/mp01-key.pem" -outform DER -out "$out/mp01-key.der"
openssl pkey -in "$out/mp01-key.pem" -aes-256-cbc -passout "pass:$key_password" -out "$out/mp01-key-encrypted.pem"
openssl pkcs12 -export -in "$out/mp01-cert.pem" -inkey "$out/mp01-key.pem" -certfile "$out/client-ca.pem" \
  -name mp01 -passout "pass:$pfx_password" -out "$out/mp01.p12"
# RC2-40 certificates and 3DES key, as old Windows exports: OpenSSL 3 needs its legacy provider.
openssl pkcs12 -export -legacy -in "$out/mp01-cert.pem" -inkey "$out/mp01-key.pem" \
  -name mp01 -passout "pass:$pfx_password" -out "$out/mp01-legacy.p12"

# mp01 with an EC P-256 key.
ec_key "$out/mp01-ec-key.pem"
issue "$out/mp01-ec-key.pem" "$out/mp01-ec-cert.pem" "mp01-ec.test.invalid" client-ca client_ec

# Second set: the inner (phase 2) EAP-TLS credentials of PEAP with inner TLS.
rsa_key "$out/mp01-inner-key.pem"
issue "$out/mp01-inner-key.pem" "$out/mp01-inner-cert.pem" "mp01-inner.test.invalid" client-ca client

# The device's own HTTPS certificate, and the CA a profile's `tls.ca` trusts it through.
rsa_key "$out/device-https-key.pem"
issue "$out/device-https-key.pem" "$out/device-https-cert.pem" "localhost" device-ca device_https

cat >"$out/README.md" <<EOF
# THROWAWAY test PKI: these keys have no value

Everything in this folder was generated by \`scripts/make-test-pki.sh\` for mpprov's tests, example
profiles and device simulator. The private keys are public (they are committed) and protect
nothing; never trust these CAs anywhere real. Rerun the script to replace them all.

Passwords: PFX files \`$pfx_password\`; \`mp01-key-encrypted.pem\` \`$key_password\`.
Validity: $days days from the day the script ran.

| file | what it is |
|---|---|
| radius-ca.pem / .key | "mpprov TEST radius CA", issues the RADIUS server certificate (the \`ca_cert\` of a profile) |
| client-ca.pem / .key | "mpprov TEST client CA", issues the Monitoring Point client certificates |
| device-ca.pem / .key | "mpprov TEST device CA", issues the device's HTTPS certificate (a profile's \`tls.ca\`) |
| radius-server.pem / .key | RADIUS server certificate (serverAuth) from the radius CA |
| mp01-cert.pem, mp01-cert.der | mp01 client certificate, RSA-2048, clientAuth, from the client CA |
| mp01-key.pem | its key, PKCS#8 PEM |
| mp01-key.der | the same key, PKCS#8 DER |
| mp01-key-encrypted.pem | the same key, encrypted PKCS#8 PEM (AES-256) |
| mp01.p12 | key, certificate and client CA, PFX with AES-256 (OpenSSL 3 default) |
| mp01-legacy.p12 | key and certificate, legacy PFX (RC2-40 certificates, 3DES key, SHA-1 MAC) |
| mp01-ec-cert.pem / mp01-ec-key.pem | mp01 client certificate and key, EC P-256 |
| mp01-inner-cert.pem / mp01-inner-key.pem | second set for PEAP with inner EAP-TLS |
| device-https-cert.pem / -key.pem | device HTTPS certificate for localhost, 127.0.0.1 and ::1 |
EOF

# Throwaway keys: readable by whoever runs the simulator, like the rest of the checkout.
chmod 644 "$out"/*
echo "make-test-pki: throwaway test PKI written to $out"
