"""A one-line command box for the desktop: click the box, type a shell command, press Enter.

It fills the screen; the box sits at (600, 400)-(1000, 440). The command runs in /app and its
output shows below. Each click's screen position is appended to
/logs/agent/runbox-clicks.txt (kept with the attempt's artifacts)."""

import subprocess
import tkinter as tk
from pathlib import Path

CLICKS = Path("/logs/agent/runbox-clicks.txt")

root = tk.Tk()
root.title("runbox")
root.attributes("-fullscreen", True)
tk.Label(root, text="Command:", font=("DejaVu Sans", 14)).place(x=480, y=405)
box = tk.Entry(root, font=("DejaVu Sans Mono", 14))
box.place(x=600, y=400, width=400, height=40)
shown = tk.Label(root, text="", font=("DejaVu Sans Mono", 12), justify="left", anchor="nw")
shown.place(x=600, y=460, width=640, height=300)


def clicked(event) -> None:
    with CLICKS.open("a") as log:
        log.write(f"{event.x_root} {event.y_root}\n")


def run(_event) -> None:
    done = subprocess.run(["bash", "-c", box.get()], cwd="/app", capture_output=True, text=True)
    shown.configure(text=(done.stdout + done.stderr)[-2000:] or f"(exit {done.returncode})")
    box.delete(0, "end")


root.bind_all("<Button-1>", clicked, add="+")
box.bind("<Return>", run)
root.mainloop()
