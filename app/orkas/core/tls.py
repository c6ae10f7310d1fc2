"""The phone mirror's TLS certificate: self-signed, made once per install with `cryptography`, kept in
the data folder (the key readable by its owner only). Phones trust it by its SHA-256 fingerprint, which
the desktop shows beside the pairing code: no certificate authority, no cloud."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from orkas.core.fsutil import atomic_write

VALID_DAYS = 3650  # pinned by fingerprint: a long life costs nothing, and a new one would mean re-pairing


@dataclass(frozen=True, slots=True)
class Certificate:
    cert: Path
    key: Path
    fingerprint: str  # "sha256:" + hex of the DER certificate, as the phone checks it


def ensure_certificate(folder: Path, hosts: tuple[str, ...] = ()) -> Certificate:
    """The install's certificate, made the first time (covering `hosts` and localhost)."""
    cert_path, key_path = folder / "mirror-cert.pem", folder / "mirror-key.pem"
    if not (cert_path.exists() and key_path.exists()):
        _make(cert_path, key_path, hosts)
    return Certificate(cert_path, key_path, fingerprint_of(cert_path))


def fingerprint_of(cert_path: Path) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    der = x509.load_pem_x509_certificate(cert_path.read_bytes()).public_bytes(Encoding.DER)
    return "sha256:" + hashlib.sha256(der).hexdigest()


def _make(cert_path: Path, key_path: Path, hosts: tuple[str, ...]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Orkas phone mirror")])
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    for host in dict.fromkeys((*hosts, "127.0.0.1", "::1")):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = cert_path.parent
    folder.mkdir(parents=True, exist_ok=True)
    pem_key = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    atomic_write(key_path, pem_key, mode=0o600)  # the owner alone
    atomic_write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
