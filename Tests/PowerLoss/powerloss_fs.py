"""A FUSE file system that loses what a power cut loses, and fails the I/O calls it is told to.

It keeps the whole tree in memory twice: what processes see now, and what a disk would still
hold after a power cut. A file's data and size reach the durable copy when the file is synced
(`fsync` or `fdatasync`); a directory's entries (creates, unlinks, renames into it) when the
directory is synced. A rename is one journal entry: once its destination directory is synced it
has left its source too, as on a journaling file system; a file moved on again before that is
durable where it ended once that directory is synced, and has then left every directory on its
way. That is POSIX's minimum and what SQLite's and ALICE's crash tests assume: nothing is
durable that was not synced.

`cut` (on the control socket) is the power cut: what was not synced is gone, the tree becomes
the durable one. The harness kills the process using the file system first (SIGKILL, reaped), so
that no call is in flight. Kernel caches do not outlive it: attributes and entries are never
cached (timeouts 0), and FUSE drops a file's page cache when it is opened again.

A failed `fsync` behaves as Linux's does: the writes since the last successful sync are marked
clean without reaching the disk, so a later `fsync` that succeeds does not make them durable
(the data stays visible until a cut). That is why a failed sync must never be retried as if the
data were safe.

Usage: powerloss_fs.py MOUNTPOINT CONTROL_SOCKET

The control socket speaks the daemons' control protocol (JSON lines, `{"id", "op", "args"}`,
answered `{"id", "ok", "result"}` or `{"id", "ok": false, "error": {...}}`):
  cut                                the power cut: {"cuts": N}
  fail {"op": "fsync", "name": "phone.db-wal", "nth": 3, "errno": "EIO"}
                                     the 3rd fsync of a file of that name (the last path
                                     component; "*" or absent: any) from now fails once with
                                     EIO (or ENOSPC); op is write, fsync, rename or open.
                                     SQLite's mapped "-shm" files are left alone
  clear                              no fault armed
  counts                             the calls of each op by file name since resetCounts:
                                     {"counts": {"fsync": {"phone.db-wal": 4}, ...}}
  resetCounts
  faults                             the faults injected so far, oldest first
  tree                               every file with its size now and after a cut
"""
import errno
import json
import os
import socket
import stat
import sys
import threading
import time

import mfusepy as fuse

ERRNOS = {"EIO": errno.EIO, "ENOSPC": errno.ENOSPC}
OPS = ("write", "fsync", "rename", "open")


def _write(buffer, offset, data):
    if offset > len(buffer):
        buffer.extend(b"\0" * (offset - len(buffer)))
    buffer[offset:offset + len(data)] = data


def _truncate(buffer, length):
    if length < len(buffer):
        del buffer[length:]
    else:
        buffer.extend(b"\0" * (length - len(buffer)))


class Node:
    _next_ino = 1

    def __init__(self, kind, mode):
        self.kind = kind  # "file" or "dir"
        self.mode = mode
        self.ino = Node._next_ino
        Node._next_ino += 1
        now = time.time_ns()
        self.mtime = now
        self.ctime = now
        # A file: its bytes now, and what a cut leaves (None: never synced, empty after a cut).
        self.data = bytearray()
        self.durable_data = None
        # The changes since the last sync that a sync would still write, in order:
        # ("write", offset, bytes) and ("truncate", length). A failed sync forgets them.
        self.pending = []
        # A directory: its entries now, and what a cut leaves.
        self.entries = {}
        self.durable_entries = None
        # Renames out of this directory not yet durable in it: name -> node.
        self.renamed_out = {}


class PowerLossFS(fuse.Operations):
    use_ns = True

    def __init__(self):
        self._mutex = threading.RLock()
        self.root = Node("dir", stat.S_IFDIR | 0o755)
        self.root.durable_entries = {}
        self.handles = {}
        self.next_fh = 1
        self.cuts = 0
        self.faults = []
        self.armed = []  # dicts: op, name, nth, errno, seen
        self.counts = {op: {} for op in OPS}
        # Renames whose destination is not yet synced: (source dir, old name, node, dest dir, new name).
        self.pending_renames = []

    # Resolution

    def _lookup(self, path):
        node = self.root
        for part in [p for p in path.split("/") if p]:
            if node.kind != "dir" or part not in node.entries:
                raise fuse.FuseOSError(errno.ENOENT)
            node = node.entries[part]
        return node

    def _parent(self, path):
        parts = [p for p in path.split("/") if p]
        parent = self._lookup("/" + "/".join(parts[:-1]))
        if parent.kind != "dir":
            raise fuse.FuseOSError(errno.ENOTDIR)
        return parent, parts[-1]

    def _node(self, path, fh=None):
        if fh is not None and fh in self.handles:
            return self.handles[fh]
        return self._lookup(path)

    # Faults

    def _maybe_fail(self, op, path):
        name = os.path.basename(path) if path else "?"
        if name.endswith("-shm"):
            # SQLite's shared-memory index is mapped, not written: its pages reach the file
            # system by writeback, when nothing in the daemon controls, and SQLite rebuilds it
            # from the WAL. Its calls are neither counted nor failed.
            return None
        self.counts[op][name] = self.counts[op].get(name, 0) + 1
        for fault in self.armed:
            if fault["op"] == op and fault["name"] in ("*", name):
                fault["seen"] += 1
                if fault["seen"] == fault["nth"]:
                    self.armed.remove(fault)
                    self.faults.append({"op": op, "name": name, "path": path, "errno": fault["errno"], "nth": fault["nth"]})
                    return ERRNOS[fault["errno"]]
        return None

    # Attributes and directories

    def getattr(self, path, fh=None):
        with self._mutex:
            node = self._node(path, fh)
            size = len(node.data) if node.kind == "file" else 4096
            return {"st_mode": node.mode, "st_ino": node.ino, "st_nlink": 2 if node.kind == "dir" else 1,
                    "st_size": size, "st_blocks": (size + 511) // 512, "st_uid": os.getuid(), "st_gid": os.getgid(),
                    "st_atime": node.mtime, "st_mtime": node.mtime, "st_ctime": node.ctime, "st_blksize": 4096}

    def readdir(self, path, fh):
        with self._mutex:
            node = self._lookup(path)
            # With use_ino an entry needs its inode number: readdir(3) skips those of number 0.
            listing = [(".", {"st_mode": node.mode, "st_ino": node.ino}, 0), ("..", {"st_mode": stat.S_IFDIR, "st_ino": 1}, 0)]
            return listing + [(name, {"st_mode": child.mode, "st_ino": child.ino}, 0) for name, child in node.entries.items()]

    def opendir(self, path):
        with self._mutex:
            node = self._lookup(path)
            fh = self.next_fh
            self.next_fh += 1
            self.handles[fh] = node
            return fh

    def releasedir(self, path, fh):
        with self._mutex:
            self.handles.pop(fh, None)
            return 0

    def mkdir(self, path, mode):
        with self._mutex:
            parent, name = self._parent(path)
            if name in parent.entries:
                raise fuse.FuseOSError(errno.EEXIST)
            node = Node("dir", stat.S_IFDIR | (mode & 0o7777))
            parent.entries[name] = node
            parent.mtime = time.time_ns()
            return 0

    def rmdir(self, path):
        with self._mutex:
            parent, name = self._parent(path)
            node = parent.entries.get(name)
            if node is None:
                raise fuse.FuseOSError(errno.ENOENT)
            if node.kind != "dir":
                raise fuse.FuseOSError(errno.ENOTDIR)
            if node.entries:
                raise fuse.FuseOSError(errno.ENOTEMPTY)
            del parent.entries[name]
            return 0

    def chmod(self, path, mode):
        with self._mutex:
            node = self._lookup(path)
            node.mode = (node.mode & ~0o7777) | (mode & 0o7777)
            node.ctime = time.time_ns()
            return 0

    def chown(self, path, uid, gid):
        return 0

    def utimens(self, path, times=None):
        with self._mutex:
            node = self._lookup(path)
            node.mtime = times[1] if times else time.time_ns()
            return 0

    def access(self, path, amode):
        with self._mutex:
            self._lookup(path)
            return 0

    def statfs(self, path):
        return {"f_bsize": 4096, "f_frsize": 4096, "f_blocks": 1 << 24, "f_bfree": 1 << 23, "f_bavail": 1 << 23,
                "f_files": 1 << 20, "f_ffree": 1 << 19, "f_namemax": 255}

    # Files

    def create(self, path, mode, fi=None):
        with self._mutex:
            failure = self._maybe_fail("open", path)
            if failure:
                raise fuse.FuseOSError(failure)
            parent, name = self._parent(path)
            node = parent.entries.get(name)
            if node is None:
                node = Node("file", stat.S_IFREG | (mode & 0o7777))
                parent.entries[name] = node
                parent.mtime = time.time_ns()
            fh = self.next_fh
            self.next_fh += 1
            self.handles[fh] = node
            return fh

    def open(self, path, flags):
        with self._mutex:
            failure = self._maybe_fail("open", path)
            if failure:
                raise fuse.FuseOSError(failure)
            node = self._lookup(path)
            if flags & os.O_TRUNC:
                node.data = bytearray()
                node.pending.append(("truncate", 0))
            fh = self.next_fh
            self.next_fh += 1
            self.handles[fh] = node
            return fh

    def release(self, path, fh):
        with self._mutex:
            self.handles.pop(fh, None)
            return 0

    def flush(self, path, fh):
        return 0

    def read(self, path, size, offset, fh):
        with self._mutex:
            node = self._node(path, fh)
            return bytes(node.data[offset:offset + size])

    def write(self, path, data, offset, fh):
        with self._mutex:
            failure = self._maybe_fail("write", path)
            if failure:
                raise fuse.FuseOSError(failure)
            node = self._node(path, fh)
            _write(node.data, offset, data)
            node.pending.append(("write", offset, bytes(data)))
            node.mtime = time.time_ns()
            return len(data)

    def truncate(self, path, length, fh=None):
        with self._mutex:
            node = self._node(path, fh)
            _truncate(node.data, length)
            node.pending.append(("truncate", length))
            node.mtime = time.time_ns()
            return 0

    def fallocate(self, path, mode, offset, size, fh):
        with self._mutex:
            node = self._node(path, fh)
            if mode == 0 and offset + size > len(node.data):
                _truncate(node.data, offset + size)
                node.pending.append(("truncate", offset + size))
            return 0

    def fsync(self, path, datasync, fh):
        with self._mutex:
            node = self._node(path, fh)
            failure = self._maybe_fail("fsync", path)
            if failure:
                # Linux marks the dirty pages clean: what was written so far never reaches the
                # disk, though reads still return it until a cut.
                node.pending = []
                raise fuse.FuseOSError(failure)
            durable = bytearray(node.durable_data or b"")
            for change in node.pending:
                if change[0] == "write":
                    _write(durable, change[1], change[2])
                else:
                    _truncate(durable, change[1])
            node.durable_data = bytes(durable)
            node.pending = []
            return 0

    def fsyncdir(self, path, datasync, fh):
        with self._mutex:
            node = self._node(path, fh)
            failure = self._maybe_fail("fsync", path)
            if failure:
                raise fuse.FuseOSError(failure)
            node.durable_entries = dict(node.entries)
            # A file moved into this directory and still here is durable here now, and nowhere
            # else: it has left every directory it passed through since its last durable move.
            # A move that a later move of the same file superseded changes nothing by itself
            # (the journal holds both, in order): it waits, with the later one, for the sync
            # of the directory where the file ended.
            settled = {id(moved) for _, _, moved, destination, new in self.pending_renames
                       if destination is node and node.entries.get(new) is moved}
            remaining = []
            for source, old, moved, destination, new in self.pending_renames:
                if id(moved) not in settled:
                    remaining.append((source, old, moved, destination, new))
                elif source is not node or node.entries.get(old) is not moved:
                    if source.durable_entries is not None and source.durable_entries.get(old) is moved:
                        del source.durable_entries[old]
            self.pending_renames = remaining
            return 0

    def unlink(self, path):
        with self._mutex:
            parent, name = self._parent(path)
            if name not in parent.entries:
                raise fuse.FuseOSError(errno.ENOENT)
            del parent.entries[name]
            parent.mtime = time.time_ns()
            return 0

    def rename(self, old, new):
        with self._mutex:
            failure = self._maybe_fail("rename", new)
            if failure:
                raise fuse.FuseOSError(failure)
            source, old_name = self._parent(old)
            destination, new_name = self._parent(new)
            node = source.entries.get(old_name)
            if node is None:
                raise fuse.FuseOSError(errno.ENOENT)
            target = destination.entries.get(new_name)
            if target is not None and target.kind == "dir" and target.entries:
                raise fuse.FuseOSError(errno.ENOTEMPTY)
            del source.entries[old_name]
            destination.entries[new_name] = node
            source.mtime = destination.mtime = time.time_ns()
            if source is not destination:
                self.pending_renames.append((source, old_name, node, destination, new_name))
            return 0

    # The power cut

    def cut(self):
        with self._mutex:
            def restore(node, seen):
                if id(node) in seen:
                    return
                seen.add(id(node))
                if node.kind == "file":
                    node.data = bytearray(node.durable_data or b"")
                    node.pending = []
                else:
                    node.entries = dict(node.durable_entries or {})
                    node.durable_entries = dict(node.entries)
                    for child in node.entries.values():
                        restore(child, seen)
            restore(self.root, set())
            self.pending_renames = []
            self.handles = {}
            self.cuts += 1
            return self.cuts

    def tree(self):
        with self._mutex:
            listing = {}

            def walk(node, path, durable):
                entries = (node.durable_entries or {}) if durable else node.entries
                for name, child in entries.items():
                    child_path = f"{path}/{name}"
                    if child.kind == "dir":
                        walk(child, child_path, durable)
                    else:
                        size = len(child.durable_data or b"") if durable else len(child.data)
                        listing.setdefault(child_path, {})["durable" if durable else "now"] = size

            walk(self.root, "", False)
            walk(self.root, "", True)
            return listing

    def command(self, op, args):
        """The result of `op`, or raises ValueError naming what was wrong."""
        if op == "cut":
            return {"cuts": self.cut()}
        if op == "fail":
            name, code, nth = args.get("op"), args.get("errno", "EIO"), args.get("nth")
            if name not in OPS or code not in ERRNOS or not isinstance(nth, int) or isinstance(nth, bool) or nth < 1:
                raise ValueError(f"fail needs op in {list(OPS)}, errno in {list(ERRNOS)} and an integer nth >= 1, not {args}")
            with self._mutex:
                self.armed.append({"op": name, "name": args.get("name", "*"), "nth": nth, "errno": code, "seen": 0})
            return {}
        if op == "clear":
            with self._mutex:
                self.armed = []
            return {}
        if op == "counts":
            with self._mutex:
                return {"counts": self.counts}
        if op == "resetCounts":
            with self._mutex:
                self.counts = {name: {} for name in OPS}
            return {}
        if op == "faults":
            with self._mutex:
                return {"faults": list(self.faults)}
        if op == "tree":
            return {"tree": self.tree()}
        raise ValueError(f"unknown op {op!r}; the ops are cut, fail, clear, counts, resetCounts, faults, tree")


def serve_control(fs, path):
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)

    def client(connection):
        with connection, connection.makefile("rwb") as stream:
            for line in stream:
                request_id = None
                try:
                    request = json.loads(line)
                    request_id = request.get("id")
                    answer = {"id": request_id, "ok": True, "result": fs.command(request.get("op"), request.get("args") or {})}
                except (ValueError, AttributeError) as error:
                    answer = {"id": request_id, "ok": False,
                              "error": {"domain": "powerloss", "code": 3, "name": "badRequest", "message": str(error)}}
                stream.write(json.dumps(answer).encode() + b"\n")
                stream.flush()

    while True:
        connection, _ = server.accept()
        threading.Thread(target=client, args=(connection,), daemon=True).start()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[-2])
    mountpoint, control = sys.argv[1:3]
    fs = PowerLossFS()
    threading.Thread(target=serve_control, args=(fs, control), daemon=True).start()
    # Nothing is cached by the kernel that a cut could make stale; one thread serves every call.
    fuse.FUSE(fs, mountpoint, foreground=True, nothreads=True, fsname="powerloss", use_ino=True,
              entry_timeout=0, attr_timeout=0, negative_timeout=0, default_permissions=True)


if __name__ == "__main__":
    main()
