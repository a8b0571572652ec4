"""A zkCli.sh session as an operator copies it from the terminal: ``get -s`` of one znode (ZooKeeper 3.5+ CLI)."""
from __future__ import annotations

import datetime as dt

from samplegen.zk.server import Node

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def java_date(ms: int) -> str:
    """java.util.Date.toString() in a UTC JVM: ``Mon Aug 16 09:15:03 UTC 2021``."""
    return (_EPOCH + dt.timedelta(milliseconds=ms)).strftime("%a %b %d %H:%M:%S UTC %Y")


def get_s(path: str, node: Node, server: str = "127.0.0.1:2181") -> str:
    data = "null" if node.data is None else node.data.decode("utf-8")
    lines = [
        f"Connecting to {server}",
        "Welcome to ZooKeeper!",
        "JLine support is enabled",
        "",
        "WATCHER::",
        "",
        "WatchedEvent state:SyncConnected type:None path:null",
        f"[zk: {server}(CONNECTED) 0] get -s {path}",
        data,
        f"cZxid = 0x{node.czxid:x}",
        f"ctime = {java_date(node.ctime)}",
        f"mZxid = 0x{node.mzxid:x}",
        f"mtime = {java_date(node.mtime)}",
        f"pZxid = 0x{node.pzxid:x}",
        f"cversion = {node.cversion}",
        f"dataVersion = {node.version}",
        f"aclVersion = {node.aversion}",
        f"ephemeralOwner = 0x{node.owner:x}",
        f"dataLength = {0 if node.data is None else len(node.data)}",
        f"numChildren = {len(node.children)}",
        f"[zk: {server}(CONNECTED) 1] quit",
        "",
    ]
    return "\n".join(lines)
