# Managed by kafkaform (roles/kafka_broker/files/kafkaform_scram.py); local changes are overwritten.
"""The declared SCRAM-SHA-512 users (SE-03), converged through Kafka's admin protocol.
``kafkaform-kafka`` calls it; it sits beside ``kafkaform_admin.py`` (installed by the kafka_broker
role in /opt/kafkaform/kafka-admin).

Kafka never gives a password back, so whether a declared one is still the user's is asked of the
cluster itself: the user logs in with it on this broker's own SASL listener (SCRAM-SHA-512 over
TLS). A broker without such a listener has nothing to log in on; there the helper compares the
password with a salted hash it kept of what it set, which only the broker that set it has.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
import socket
import ssl
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import kafka.errors
from kafka.admin import ScramMechanism, UserScramCredentialDeletion, UserScramCredentialUpsertion
from kafka.net.sasl.scram import SaslMechanismScram
from kafka.protocol.admin.users import AlterUserScramCredentialsRequest
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest
from kafkaform_admin import Properties, tls_context

SCRAM = "SCRAM-SHA-512"
#: What was last set for each user, as a salted PBKDF2 hash (root only), on a broker without a
#: SASL listener to log in on: without it every run would set every password again.
SCRAM_STATE = "/var/lib/kafkaform/kafka-scram-users.json"
#: Logins tried at once: 50 users take a few round trips, not 50.
LOGIN_THREADS = 8
#: Seconds a login waits for the listener at each step (connection, TLS, each answer).
LOGIN_TIMEOUT_S = 10.0

#: Whether a user logs in with a password: False on an authentication failure only.
Login = Callable[[str, str], bool]


class LoginError(Exception):
    """A login that could not be tried (the listener refused the connection, did not answer, or
    offers no SCRAM-SHA-512): it says nothing about the password."""


def scram_listener(server: Properties) -> str | None:
    """host:port of this broker's first SASL_SSL listener offering SCRAM-SHA-512, as it advertises
    it (the name its certificate holds), from server.properties; None without one."""
    protocols = dict(entry.split(":", 1) for entry in
                     server.get("listener.security.protocol.map", "").split(",") if entry)
    bound = [entry.split("://", 1) for entry in server.get("listeners", "").split(",") if entry]
    advertised = dict(entry.split("://", 1) for entry in
                      server.get("advertised.listeners", "").split(",") if entry)
    for name, address in bound:
        mechanisms = server.get(f"listener.name.{name.lower()}.sasl.enabled.mechanisms",
                                server.get("sasl.enabled.mechanisms", "GSSAPI"))
        if protocols.get(name, name) == "SASL_SSL" and SCRAM in mechanisms.split(","):
            return advertised.get(name, address)
    return None


def logs_in(listener: str, context: ssl.SSLContext, name: str, password: str,
            timeout_s: float = LOGIN_TIMEOUT_S) -> bool:
    """Whether ``name`` logs in with ``password`` on ``listener`` (False: Kafka answered
    SASL_AUTHENTICATION_FAILED); LoginError when no login could be tried. Kafka's own requests
    (kafka-python's protocol and SCRAM client) on a blocking socket: kafka-python 3.0.12's own
    connection drops bytes read together with the end of the connection (kafka/net/transport.py,
    _sock_recv), which is how a broker answers a failed login: about half of them came out as a
    disconnection on the kraft scenario's brokers."""
    host, _colon, port = listener.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s) as raw, \
                context.wrap_socket(raw, server_hostname=host) as tls:
            return _scram_exchange(tls, name, password)
    except (OSError, ValueError, kafka.errors.KafkaError) as error:
        # Its class and text (the socket's, TLS's or Kafka's) never hold the password.
        raise LoginError(f"cannot log in on the SASL listener {listener}: "
                         f"{type(error).__name__}: {error}") from None


def _scram_exchange(tls: ssl.SSLSocket, name: str, password: str) -> bool:
    """SaslHandshake then SaslAuthenticate (both version 1, KIP-152) until SCRAM is done."""
    protocol = KafkaProtocol(client_id="kafkaform-login")

    def ask(request: Any) -> Any:
        protocol.send_request(request)
        tls.sendall(protocol.send_bytes())
        while True:
            data = tls.recv(65536)
            if not data:
                raise ConnectionError("the listener closed the connection")
            responses = protocol.receive_bytes(data)
            if responses:
                return responses[0][1]

    mechanisms = ask(SaslHandshakeRequest(mechanism=SCRAM, version=1))
    if mechanisms.error_code or SCRAM not in mechanisms.mechanisms:
        raise ValueError(f"no {SCRAM} offered (offered: {mechanisms.mechanisms}, "
                         f"{kafka.errors.for_code(mechanisms.error_code).__name__})")
    scram = SaslMechanismScram(sasl_mechanism=SCRAM, sasl_plain_username=name,
                               sasl_plain_password=password)
    while not scram.is_done():
        answer = ask(SaslAuthenticateRequest(auth_bytes=scram.auth_bytes(), version=1))
        if answer.error_code == kafka.errors.SaslAuthenticationFailedError.errno:
            return False
        if answer.error_code:
            raise kafka.errors.for_code(answer.error_code)(answer.error_message)
        scram.receive(answer.auth_bytes)
    return True


def listener_login(server: Properties) -> Login | None:
    """Logins on this broker's SASL listener (:func:`scram_listener`), over TLS with the node's
    trust bundle; None for a broker without one."""
    listener = scram_listener(server)
    if listener is None:
        return None
    return functools.partial(logs_in, listener, tls_context(server), timeout_s=LOGIN_TIMEOUT_S)


def _digest(password: str, salt: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), 200_000).hex()


def _load_state(path: str) -> dict[str, dict[str, str]]:
    try:
        with open(path, encoding="utf-8") as handle:
            loaded = json.load(handle)
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _save_state(path: str, state: Mapping[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
              encoding="utf-8") as handle:
        json.dump(state, handle)


def _logged_in(login: Login, users: Sequence[tuple[str, str]]) -> dict[str, bool]:
    """Each user's login, tried on LOGIN_THREADS threads at once; any LoginError is raised (no
    answer is given without every login)."""
    with ThreadPoolExecutor(max_workers=LOGIN_THREADS) as pool:
        answers = list(pool.map(lambda user: login(*user), users))
    return dict(zip((user[0] for user in users), answers, strict=True))


def converge_users(admin: Any, spec: Mapping[str, Any], dry_run: bool, login: Login | None,
                   state_path: str | None = None) -> list[str]:
    """Create, update or delete SCRAM users: a password is set when the user has no
    SCRAM-SHA-512 credential, has one of other iterations than ``spec``'s, or does not log in
    with it (``login``; None: the hash kept in ``state_path`` differs). The names changed (or,
    with ``dry_run``, that would be)."""
    state_path = state_path or SCRAM_STATE
    iterations = int(spec["iterations"])
    existing = {name: c["iterations"] for name, info in
                admin.describe_user_scram_credentials().items()
                for c in info.get("credential_infos") or []
                if c["mechanism"] == ScramMechanism.SCRAM_SHA_512}
    present = [(str(u["name"]), str(u["password"])) for u in spec["users"]
               if u.get("state", "present") != "absent"]
    current = [u for u in present if existing.get(u[0]) == iterations]
    state = _load_state(state_path) if login is None else {}
    if login is not None:
        kept = {name for name, ok in _logged_in(login, current).items() if ok}
    else:  # no SASL listener on this broker: the hashes it kept of what it set
        kept = {name for name, password in current if name in state and hmac.compare_digest(
            state[name]["hash"], _digest(password, state[name]["salt"]))}
    changes: list[Any] = []
    changed = []
    for user in spec["users"]:
        name = str(user["name"])
        if user.get("state", "present") == "absent":
            if name in existing:
                changes.append(UserScramCredentialDeletion(name, SCRAM))
                changed.append(name)
        elif name not in kept:
            changes.append(UserScramCredentialUpsertion(name, SCRAM, str(user["password"]),
                                                        iterations=iterations))
            changed.append(name)
    if dry_run or not changes:
        return changed
    failed = alter_scram(admin, changes)
    if failed:
        raise SystemExit(f"kafkaform-kafka: SCRAM credentials not changed: {failed}")
    if login is None:
        _save_state(state_path, _remembered(state, spec["users"], changed))
    return changed


def _remembered(state: dict[str, Any], users: Sequence[Mapping[str, Any]],
                changed: Sequence[str]) -> dict[str, Any]:
    """``state`` with a new hash of each password just set, and no user declared absent."""
    for user in users:
        name = str(user["name"])
        if user.get("state", "present") == "absent":
            state.pop(name, None)
        elif name in changed:
            salt = secrets.token_hex(16)
            state[name] = {"salt": salt, "hash": _digest(str(user["password"]), salt)}
    return state


def alter_scram(admin: Any, changes: Sequence[Any]) -> dict[str, str]:
    """Send SCRAM credential deletions and upsertions to the controller; the users whose change
    failed, with why. kafka-python 3.0.12's own call sends them to any broker, and a
    ZooKeeper-mode broker that is not the controller answers NOT_CONTROLLER without a message,
    which that call reports as success: here the library's controller routing carries the
    request, and every error code counts."""
    request = AlterUserScramCredentialsRequest(
        deletions=[(c.user, int(c.mechanism)) for c in changes
                   if isinstance(c, UserScramCredentialDeletion)],
        upsertions=[(c.user, int(c.mechanism), c.iterations, c.salt, c.salted_password)
                    for c in changes if isinstance(c, UserScramCredentialUpsertion)])
    response = admin._manager.run(  # pylint: disable=protected-access
        admin._send_request_to_controller, request)  # pylint: disable=protected-access
    return {r.user: str(r.error_message or f"error code {r.error_code}")
            for r in response.results if r.error_code}
