"""A throwaway PostgreSQL server for the inbox's tests: initdb and pg_ctl from Debian's
`postgresql` package (make test installs it when missing), a cluster in a fresh
directory, listening on 127.0.0.1 at a free port, stopped and deleted at the end.

initdb refuses to run as root, so under root (CI, this machine) the server runs as
the unprivileged `postgres` user the package creates (or `nobody`)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SUPERUSER = "vetq"


def postgres_bin() -> Path | None:
    """The folder with initdb and pg_ctl: Debian keeps them out of PATH."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _unprivileged_user() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")


class PostgresServer:
    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.user = _unprivileged_user()
        self.root = Path(tempfile.mkdtemp(prefix="vetq-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.started = False

    def _run(self, *command: str, timeout: float = 60) -> None:
        done = subprocess.run(
            [str(self.bin_dir / command[0]), *command[1:]],
            user=self.user,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
        )
        if done.returncode != 0:
            log = (self.root / "server.log").read_text() if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"{command[0]} failed: {done.stderr[-1500:]} {log[-1500:]}")

    def start(self) -> PostgresServer:
        if self.user is not None:
            record = pwd.getpwnam(self.user)
            os.chown(self.root, record.pw_uid, record.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options, "-w", "start")
        self.started = True
        return self

    @property
    def base_url(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}"

    def create_database(self, name: str) -> str:
        """A fresh database on the server; its VETQ_INBOX_URL."""
        import psycopg

        with psycopg.connect(f"{self.base_url}/postgres", autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
            connection.execute(f'CREATE DATABASE "{name}"')
        return f"{self.base_url}/{name}"

    def stop(self) -> None:
        try:
            if self.started:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=30)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
