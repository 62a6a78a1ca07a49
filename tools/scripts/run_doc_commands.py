#!/usr/bin/env python3
"""Runs every `$ pao ...` command shown in a doc's code blocks and saves each output, so that two
builds can be compared command by command (a refactoring that must not change any result):

    tools/scripts/run_doc_commands.py docs/simulator.md --pao build/release/tools/pao --out /tmp/a
    ... change, rebuild ...
    tools/scripts/run_doc_commands.py docs/simulator.md --pao build/release/tools/pao --out /tmp/b
    diff -r /tmp/a /tmp/b

A command continues on the next line after a trailing backslash. Commands run in a scratch folder
that holds a copy of the repository's data/ (the docs' relative paths), so files they write, even
under data/ (`pao sim calibrate --synthesize data/measurements/...`), stay out of the tree. Output
file NN.txt holds the command line, its exit status, stdout and stderr.
"""
import argparse
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile


def doc_commands(text):
    commands, in_block, pending = [], False, None
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_block, pending = not in_block, None
            continue
        if not in_block:
            continue
        if pending is not None:
            pending += " " + line.strip().rstrip("\\").strip()
            if not line.rstrip().endswith("\\"):
                commands.append(pending)
                pending = None
            continue
        m = re.match(r"^\$ (pao .*)$", line.strip())
        if m:
            cmd = m.group(1)
            if cmd.rstrip().endswith("\\"):
                pending = cmd.rstrip().rstrip("\\").strip()
            else:
                commands.append(cmd)
    return commands


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("doc")
    ap.add_argument("--pao", required=True, help="the pao binary to run")
    ap.add_argument("--out", required=True, help="folder for the outputs")
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parents[2]
    pao = str(pathlib.Path(args.pao).resolve())
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    commands = doc_commands(pathlib.Path(args.doc).read_text())
    # Commands run in a scratch folder (files they write land there) with a copy of the
    # repository's data/ (the relative paths the docs use; a link would let them write into it).
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="doc-commands-"))
    shutil.copytree(root / "data", scratch / "data")
    for i, cmd in enumerate(commands):
        line = shlex.quote(pao) + cmd[len("pao"):]
        r = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True, text=True)
        (out / f"{i:02d}.txt").write_text(f"$ {cmd}\nexit {r.returncode}\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}")
        print(f"{i:02d} exit {r.returncode}: {cmd}")
    print(f"{len(commands)} commands; outputs in {out}")


if __name__ == "__main__":
    sys.exit(main())
