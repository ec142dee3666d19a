#!/bin/sh
# Makes the certificates tls_test and identity_test need, in directory $1,
# with openssl (docs/operations.md, "TLS", issues them the same way):
#   ca.crt                      the cluster's CA
#   ps-0, worker-0..2 .crt/.key each task's: SAN IP and DNS 127.0.0.1, DNS
#                               localhost, URI tfd:task/JOB/N
#   client, chief, operator     clients with URI tfd:role/ROLE
#   anonymous.crt/.key          a client's from the CA with no tfd identity
#   other-ca.crt, other.crt/.key  a second CA and a client certificate from it
#   expired.crt/.key            a client's from the CA, valid only in 2020
# EC P-256 keys: quick to make, so the test spends its time on tfd.
set -eu
dir=$1
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }
ca() {  # name CN
  key "$1"
  openssl req -x509 -new -key "$1.key" -out "$1.crt" -days 30 -subj "/CN=$2" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
# signed NAME CA CN [SAN]: a leaf certificate, valid now, signed by CA.
signed() {
  key "$1"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$3"
  ext="basicConstraints=CA:FALSE"
  if [ $# -ge 4 ]; then ext="$ext
subjectAltName=$4"; fi
  printf '%s\n' "$ext" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -set_serial "$(date +%s%N)" \
    -days 30 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
}

ca ca "tfd test CA"
ca other-ca "another CA"
here="IP:127.0.0.1,DNS:127.0.0.1,DNS:localhost"
signed ps-0 ca tfd-ps-0 "$here,URI:tfd:task/ps/0"
for i in 0 1 2; do signed "worker-$i" ca "tfd-worker-$i" "$here,URI:tfd:task/worker/$i"; done
for role in client chief operator; do signed "$role" ca "tfctl-$role" "URI:tfd:role/$role"; done
signed anonymous ca someone
signed other other-ca intruder "URI:tfd:role/client"

# Expired: `openssl x509 -days` cannot go back in time, `openssl ca` can
# (-startdate/-enddate), given the small database it keeps.
key expired
openssl req -new -key expired.key -out expired.csr -subj "/CN=expired-user"
mkdir -p ca-db
: > ca-db/index.txt
echo 01 > ca-db/serial
cat > ca-db/ca.cnf <<CNF
[ca]
default_ca = test
[test]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
default_md = sha256
policy = any
[any]
commonName = supplied
CNF
openssl ca -batch -config ca-db/ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr \
  -out expired.crt -startdate 20200101000000Z -enddate 20200102000000Z -notext 2>/dev/null
