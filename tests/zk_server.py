"""A real, throwaway ZooKeeper server for tests and benchmarks.

Runs Debian's ZooKeeper (``apt-get install zookeeper``) standalone on
127.0.0.1 with a free port and its own data dir. tickTime is small so that a
killed client's session expires within about a second. Only the process this
module started is ever stopped, by its pid.
"""
from __future__ import annotations

import glob
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

JAVA_DIR = Path(os.environ.get("KAFKA_FORENSICS_ZK_JARS", "/usr/share/java"))
ZK_JAR = JAVA_DIR / "zookeeper.jar"
SERVER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
TXN_TOOL = "org.apache.zookeeper.server.persistence.TxnLogToolkit"


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGTERM when the test process dies, however it dies."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def four_letter(port: int, cmd: str, timeout: float = 2.0) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(cmd.encode())
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks).decode("utf-8", "replace")


class ZkServer:
    """One standalone ZooKeeper; ``start``/``stop``/``restart`` keep port and data dir."""

    def __init__(self, workdir: Path, tick_ms: int = 100, heap: str = "256m", extra_cfg: dict | None = None,
                 tls: "TlsMaterial | None" = None):
        if not ZK_JAR.is_file():
            raise RuntimeError(
                f"ZooKeeper is not installed ({ZK_JAR} missing): apt-get install -y zookeeper "
                "(or set KAFKA_FORENSICS_ZK_JARS to a folder holding zookeeper.jar and its dependencies)"
            )
        self.workdir = Path(workdir)
        self.datadir = self.workdir / "data"
        self.datadir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.tick_ms = tick_ms
        self.heap = heap
        self.extra_cfg = dict(extra_cfg or {})
        self.tls = tls
        self.secure_port = free_port() if tls else None
        if tls:  # TLS on secureClientPort needs Netty; the server asks for a client certificate
            self.extra_cfg.update({
                "secureClientPort": self.secure_port, "secureClientPortAddress": "127.0.0.1",
                "serverCnxnFactory": "org.apache.zookeeper.server.NettyServerCnxnFactory",
                "ssl.keyStore.location": tls.server_pem, "ssl.keyStore.type": "PEM",
                "ssl.trustStore.location": tls.ca, "ssl.trustStore.type": "PEM", "ssl.clientAuth": "need",
            })
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "server.log"

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def secure_hosts(self) -> str:
        return f"127.0.0.1:{self.secure_port}"

    def _write_cfg(self) -> Path:
        cfg = {
            "tickTime": self.tick_ms,
            "dataDir": self.datadir,
            "clientPort": self.port,
            "clientPortAddress": "127.0.0.1",
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "*",
            "maxClientCnxns": 0,
            **self.extra_cfg,
        }
        path = self.workdir / "zoo.cfg"
        path.write_text("".join(f"{k}={v}\n" for k, v in cfg.items()))
        return path

    def start(self, wait_s: float = 60.0) -> "ZkServer":
        cfg = self._write_cfg()
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            ["java", f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-Dzookeeper.preAllocSize=1024",
             # Debian's zookeeper.jar manifest leaves netty-codec out; Netty (TLS) needs it.
             "-cp", f"{ZK_JAR}:{JAVA_DIR / 'netty-codec.jar'}", SERVER_MAIN, str(cfg)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        log.close()
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                if self._serving():
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"ZooKeeper did not answer on {self.hosts} within {wait_s}s: {self.log_tail()}")

    def _serving(self) -> bool:
        if self.tls is None:
            # "ruok" answers before the server serves; "srvr" says so only once it does.
            return "Mode:" in four_letter(self.port, "srvr", timeout=0.5)
        # Netty's server gives four-letter words no answer here: open a session instead.
        from kazoo.client import KazooClient

        probe = KazooClient(hosts=self.hosts, timeout=2.0)
        try:
            probe.start(timeout=1.0)
            return True
        except Exception:  # noqa: BLE001 - not up yet
            return False
        finally:
            probe.stop()
            probe.close()

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def txn_logs(self) -> list[Path]:
        return sorted(Path(p) for p in glob.glob(str(self.datadir / "version-2" / "log.*")))

    def dump_txn_logs(self) -> str:
        """All txn log files as printed by ZooKeeper's own TxnLogToolkit."""
        out = []
        for log in self.txn_logs():
            res = subprocess.run(
                ["java", "-Duser.timezone=UTC", "-Duser.language=en", "-Duser.country=US",
                 "-cp", f"{ZK_JAR}:{JAVA_DIR}/*", TXN_TOOL, "--dump", str(log)],
                capture_output=True, timeout=120,
            )
            if res.returncode != 0:
                raise RuntimeError(f"TxnLogToolkit failed on {log}: {res.stderr.decode(errors='replace')[-1000:]}")
            out.append(res.stdout.decode("utf-8", "replace"))
        return "\n".join(out)


class TlsMaterial:
    """A throwaway CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.ca, self.server_pem = folder / "ca.pem", folder / "server.pem"
        self.client_cert, self.client_key = folder / "client.crt", folder / "client.key"
        self.other_ca = folder / "other-ca.pem"  # a CA that signed nothing here

        def ssl(*args: str) -> None:
            subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

        new_key = ["req", "-newkey", "rsa:2048", "-nodes"]
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=test-ca")
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other.key", "-out", "other-ca.pem", "-days", "2", "-subj", "/CN=other")
        (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        for name, subj, ext in (("server", "/CN=localhost", ["-extfile", "ext.cnf"]), ("client", "/CN=capture", [])):
            ssl(*new_key, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subj)
            ssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.crt", "-days", "2", *ext)
        self.server_pem.write_bytes((folder / "server.key").read_bytes() + (folder / "server.crt").read_bytes())


_TXN = re.compile(r" session (0x[0-9a-f]+) cxid (0x[0-9a-f]+) zxid (0x[0-9a-f]+) (\w+)")


def txns_by_session(dump: str) -> dict[int, list[tuple[int, str]]]:
    """session id -> [(zxid, txn type)] from TxnLogToolkit's text (records may span lines)."""
    out: dict[int, list[tuple[int, str]]] = {}
    for m in _TXN.finditer(dump):
        out.setdefault(int(m.group(1), 16), []).append((int(m.group(3), 16), m.group(4)))
    return out


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory):
    server = ZkServer(tmp_path_factory.mktemp("zk")).start()
    try:
        yield server
    finally:
        server.stop()


# --- a Kafka-like tree, written by the TEST's own client (never by capture code) ---------------
# Payloads as Kafka 2.7 writes them (see the shared zk_real/README.md, "Kafka payloads").

def broker_json(broker_id: int, ts_ms: int) -> bytes:
    return (
        '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        f'"endpoints":["PLAINTEXT://kafka-broker-{broker_id}:9092"],"jmx_port":-1,"features":{{}},'
        f'"host":"kafka-broker-{broker_id}","timestamp":"{ts_ms}","port":9092,"version":5}}'
    ).encode()


def state_json(leader: int, isr: list[int], leader_epoch: int = 0, controller_epoch: int = 1) -> bytes:
    return (
        f'{{"controller_epoch":{controller_epoch},"leader":{leader},"version":1,'
        f'"leader_epoch":{leader_epoch},"isr":[{",".join(map(str, isr))}]}}'
    ).encode()


def assignment_json(replicas: dict[int, list[int]]) -> bytes:
    parts = ",".join(f'"{p}":[{",".join(map(str, r))}]' for p, r in replicas.items())
    return f'{{"version":2,"partitions":{{{parts}}},"adding_replicas":{{}},"removing_replicas":{{}}}}'.encode()


def register_broker(client, broker_id: int, ts_ms: int = 1700000000000) -> None:
    """Like KafkaZkClient.registerBroker: an ephemeral created and filled in the same multi (Kafka
    creates it with null data; kazoo's multi cannot, so it is empty here: version 1 either way)."""
    tx = client.transaction()
    tx.create(f"/brokers/ids/{broker_id}", b"", ephemeral=True)
    tx.set_data(f"/brokers/ids/{broker_id}", broker_json(broker_id, ts_ms))
    results = tx.commit()
    if any(isinstance(r, Exception) for r in results):
        raise RuntimeError(f"register broker {broker_id}: {results}")


CONTAINERS = (
    "/brokers", "/brokers/ids", "/brokers/topics", "/brokers/seqid", "/config", "/config/topics",
    "/config/brokers", "/config/changes", "/config/users", "/admin", "/admin/delete_topics",
    "/isr_change_notification", "/log_dir_event_notification", "/cluster", "/consumers",
)


def load_kafka_tree(client, topics: dict[str, dict[int, list[int]]], *, controller: int | None = 1,
                    controller_epoch: int = 1, window: int = 2000) -> dict[str, bytes | None]:
    """Creates the persistent part of a Kafka cluster's tree (brokers register separately) and
    returns path -> data of everything created. Leaders are the first replica, ISR = replicas."""
    written: dict[str, bytes | None] = {}

    def create(path: str, data: bytes | None, **kw) -> None:
        client.create(path, data, **kw)
        written[path] = data

    for c in CONTAINERS:
        create(c, None)
    create("/controller_epoch", str(controller_epoch).encode())
    create("/cluster/id", b'{"version":"1","id":"Zl5cJfWiS0aDYq3ybdQx7g"}')
    create("/config/users/alice", b'{"version":1,"config":{"SCRAM-SHA-256":"salt=c2FsdA==,stored_key=SECRETKEY,'
                                   b'server_key=SECRETKEY,iterations=4096"}}')
    batch = []
    for topic, replicas in topics.items():
        create(f"/brokers/topics/{topic}", assignment_json(replicas))
        create(f"/brokers/topics/{topic}/partitions", None)
        for p, reps in replicas.items():
            batch.append((f"/brokers/topics/{topic}/partitions/{p}", None))
        for p, reps in replicas.items():
            batch.append((f"/brokers/topics/{topic}/partitions/{p}/state", state_json(reps[0], reps, 0, controller_epoch)))
    # Pipelined: partitions first (state znodes need their parent), in order on one connection.
    pending = []
    for path, data in batch:
        pending.append(client.create_async(path, data))
        written[path] = data
        if len(pending) >= window:
            for r in pending:
                r.get()
            pending = []
    for r in pending:
        r.get()
    if controller is not None:
        data = f'{{"version":1,"brokerid":{controller},"timestamp":"1700000000000"}}'.encode()
        create("/controller", data, ephemeral=True)
    return written


_BROKER_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[3])
from kazoo.client import KazooClient
from zk_server import register_broker
c = KazooClient(hosts=sys.argv[1], timeout=2.0)
c.start()
register_broker(c, int(sys.argv[2]))
print("0x%x" % c.client_id[0], flush=True)
sys.stdin.read()  # until SIGKILL, or until the test process is gone (its end of the pipe closes)
"""


class BrokerProcess:
    """A broker's ZooKeeper session in its own process, so that SIGKILL lets it expire like a
    crashed broker's (2 s session timeout, as Kafka's in the shared zk_real scenarios; shorter
    ones can expire on their own on a loaded machine)."""

    def __init__(self, hosts: str, broker_id: int):
        import sys

        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BROKER_SCRIPT, hosts, str(broker_id), str(Path(__file__).parent)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("0x"):
            self.kill()
            raise RuntimeError(f"broker {broker_id} did not register")
        self.session_id = int(line, 16)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe and not pipe.closed:
                pipe.close()


class FreezableProxy:
    """A TCP proxy in front of a server that can go silent without closing anything, the way a
    network partition looks to both sides: the server stops hearing pings and expires the
    session, the client times out and reconnects."""

    def __init__(self, upstream_port: int):
        import threading

        self.upstream_port = upstream_port
        self.frozen = threading.Event()
        self.thawed = threading.Event()
        self.thawed.set()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._conns: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        import threading

        while not self._closed:
            try:
                down, _ = self._listener.accept()
            except OSError:
                return
            self.thawed.wait()  # a partition also stops new connections from getting through
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            except OSError:
                down.close()
                continue
            self._conns += [down, up]
            for a, b in ((down, up), (up, down)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                self.thawed.wait()
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass

    def freeze(self) -> None:
        self.thawed.clear()

    def thaw(self) -> None:
        """Ends the partition; connections that lived through it are cut (their peers gave up)."""
        for s in self._conns:
            try:
                s.close()
            except OSError:
                pass
        self._conns = []
        self.thawed.set()

    def close(self) -> None:
        self._closed = True
        self.thaw()
        self._listener.close()
