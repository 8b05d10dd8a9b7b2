#!/usr/bin/env bash
# certs/generate.sh: make (or rotate) the TLS material for the jobguard webhook.
#
#   certs/generate.sh --service NAME --namespace NS --out DIR
#                     [--ip IP]... [--dns NAME]... [--days N] [--ca-days N] [--force]
#
# Writes into DIR:
#   ca.key  (0600)  CA private key, ECDSA P-256 (kept so the CA can sign again)
#   ca.crt  (0644)  CA certificate, self-signed, --ca-days (default 3650)
#   tls.key (0600)  serving private key, ECDSA P-256
#   tls.crt (0644)  serving certificate signed by the CA, --days (default 365), SANs:
#                   NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local, every --dns, every --ip
# and prints base64(ca.crt) on stdout (the webhook caBundle) and nothing else there;
# progress goes to stderr.
#
# If DIR already has ca.crt and ca.key, the CA is reused and only the serving certificate
# is issued again, so the caBundle does not change (rotation). Existing tls.crt/tls.key are
# not overwritten unless --force is given; --force never replaces an existing CA: delete
# ca.crt and ca.key yourself to start a new CA.
# Needs only the openssl CLI (1.1.1 or 3.x).
set -euo pipefail

prog=${0##*/}
usage() {
	sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit "${1:-2}"
}
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
log() { printf '%s: %s\n' "$prog" "$*" >&2; }

service='' namespace='' out='' days=365 ca_days=3650 force=0
ips=() dnss=()
need_arg() { [[ $# -ge 2 && -n $2 ]] || die "option $1 needs a value"; }
while [[ $# -gt 0 ]]; do
	case $1 in
	--service) need_arg "$@"; service=$2; shift 2 ;;
	--namespace) need_arg "$@"; namespace=$2; shift 2 ;;
	--out) need_arg "$@"; out=$2; shift 2 ;;
	--ip) need_arg "$@"; ips+=("$2"); shift 2 ;;
	--dns) need_arg "$@"; dnss+=("$2"); shift 2 ;;
	--days) need_arg "$@"; days=$2; shift 2 ;;
	--ca-days) need_arg "$@"; ca_days=$2; shift 2 ;;
	--force) force=1; shift ;;
	-h | --help) usage 0 ;;
	*) printf '%s: error: unknown argument: %s\n' "$prog" "$1" >&2; usage 2 ;;
	esac
done

[[ -n $service ]] || die "--service is required"
[[ -n $namespace ]] || die "--namespace is required"
[[ -n $out ]] || die "--out is required"
dns_re='^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
[[ $service =~ $dns_re && ${#service} -le 63 ]] || die "--service must be a DNS-1123 label: $service"
[[ $namespace =~ $dns_re && ${#namespace} -le 63 ]] || die "--namespace must be a DNS-1123 label: $namespace"
[[ $days =~ ^[1-9][0-9]*$ ]] || die "--days must be a positive integer: $days"
[[ $ca_days =~ ^[1-9][0-9]*$ ]] || die "--ca-days must be a positive integer: $ca_days"
for d in "${dnss[@]}"; do
	[[ $d =~ ^(\*\.)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "--dns is not a DNS name: $d"
done
for ip in "${ips[@]}"; do
	[[ $ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ || $ip =~ ^[0-9a-fA-F:]+$ ]] || die "--ip is not an IP address: $ip"
done
command -v openssl >/dev/null || die "openssl not found on PATH"

mkdir -p -- "$out"
umask 077

if [[ $force -eq 0 ]]; then
	for f in tls.crt tls.key; do
		[[ ! -e $out/$f ]] || die "$out/$f exists; use --force to issue a new serving certificate"
	done
fi

tmp=$(mktemp -d "$out/.generate.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# --- CA: reuse or create -----------------------------------------------------
if [[ -e $out/ca.crt || -e $out/ca.key ]]; then
	[[ -s $out/ca.crt && -s $out/ca.key ]] || die "$out has only one of ca.crt and ca.key; remove it or restore the other"
	# The key must belong to the certificate.
	a=$(openssl x509 -in "$out/ca.crt" -noout -pubkey) || die "cannot read $out/ca.crt"
	b=$(openssl pkey -in "$out/ca.key" -pubout) || die "cannot read $out/ca.key"
	[[ $a == "$b" ]] || die "$out/ca.key does not match $out/ca.crt"
	openssl x509 -in "$out/ca.crt" -noout -checkend 86400 >/dev/null ||
		log "warning: the CA in $out/ca.crt expires within a day; delete ca.crt and ca.key to make a new CA"
	log "reusing the CA in $out (caBundle unchanged)"
else
	log "creating a new CA (ECDSA P-256, $ca_days days) in $out"
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/ca.key" 2>/dev/null
	openssl req -x509 -new -key "$tmp/ca.key" -sha256 -days "$ca_days" \
		-subj "/CN=jobguard-ca ${service}.${namespace}" \
		-addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-addext "subjectKeyIdentifier=hash" \
		-out "$tmp/ca.crt"
	chmod 0600 "$tmp/ca.key"
	chmod 0644 "$tmp/ca.crt"
	mv -f -- "$tmp/ca.key" "$out/ca.key"
	mv -f -- "$tmp/ca.crt" "$out/ca.crt"
fi

# --- serving certificate -------------------------------------------------------
san="DNS:${service},DNS:${service}.${namespace},DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local"
for d in "${dnss[@]}"; do san+=",DNS:$d"; done
for ip in "${ips[@]}"; do san+=",IP:$ip"; done

cat >"$tmp/ext.cnf" <<EXT
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = $san
EXT

log "issuing the serving certificate for ${service}.${namespace}.svc ($days days)"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/tls.key" 2>/dev/null
openssl req -new -key "$tmp/tls.key" -subj "/CN=${service}.${namespace}.svc" -out "$tmp/tls.csr"
# A random serial (-set_serial would need a counter; -CAcreateserial would write a file into DIR).
serial=0x$(openssl rand -hex 16)
openssl x509 -req -in "$tmp/tls.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -set_serial "$serial" \
	-sha256 -days "$days" -extfile "$tmp/ext.cnf" -out "$tmp/tls.crt" 2>/dev/null
openssl verify -CAfile "$out/ca.crt" "$tmp/tls.crt" >/dev/null || die "the new certificate does not verify"
chmod 0600 "$tmp/tls.key"
chmod 0644 "$tmp/tls.crt"
# The two renames are not atomic together: a reloader must check that key and certificate match.
mv -f -- "$tmp/tls.key" "$out/tls.key"
mv -f -- "$tmp/tls.crt" "$out/tls.crt"

log "wrote $out/ca.crt $out/tls.crt $out/tls.key (SANs: ${san//DNS:/})"
log "caBundle (stdout):"
# base64 without line breaks (GNU -w0; portable fallback via tr).
base64 <"$out/ca.crt" | tr -d '\n'
printf '\n'
