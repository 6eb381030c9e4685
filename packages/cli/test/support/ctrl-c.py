"""Run a command on a terminal of its own and press Ctrl-C once WAIT_FOR has appeared on it.

    /usr/bin/python3 ctrl-c.py WAIT_FOR COMMAND [ARG...]

Prints one JSON object: `screen`, every byte the terminal showed (as latin-1 text), `pressed`
(whether WAIT_FOR appeared, and so Ctrl-C was pressed), and `signal` or `code`, how the
command ended. The Ctrl-C goes through the terminal's line discipline, as a user's does.
"""
import json
import os
import pty
import select
import sys
import time

wait_for = sys.argv[1].encode()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])

screen = b""
pressed = False
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.05)
    if not ready:
        continue
    try:
        chunk = os.read(fd, 65536)
    except OSError:  # EIO: the command and everything on its terminal have gone
        break
    if not chunk:
        break
    screen += chunk
    if not pressed and wait_for in screen:
        os.write(fd, b"\x03")
        pressed = True
_, status = os.waitpid(pid, 0)
ended = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"code": os.WEXITSTATUS(status)}
print(json.dumps({"screen": screen.decode("latin-1"), "pressed": pressed, **ended}))
